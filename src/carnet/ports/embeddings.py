"""Turning text into vectors: the dense embedder and the keyed sparse encoder."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from carnet.domain.records import Scope
from carnet.ports.vectors import SparseVector, Vector


class Embedder(Protocol):
    """Dense text embeddings, L2-normalised, so a dot product is a cosine."""

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed_passages(self, texts: Sequence[str]) -> Vector:
        """Shape (len(texts), dim). Called in batches on writes."""
        ...

    def embed_query(self, text: str) -> Vector:
        """Shape (dim,)."""
        ...


class EmbedderFront:
    """What an ``Embedder`` put in front of another forwards unchanged: the model's id and dimension and
    the passages. The fronts (the query cache, the query batcher, the benchmarks' memo) subclass it and
    add or replace what they change, ``embed_query`` first."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed_passages(self, texts: Sequence[str]) -> Vector:
        return self.inner.embed_passages(texts)


class SparseEncoder(Protocol):
    """Keyword vectors whose indices are keyed token hashes (no word is stored in clear)."""

    def encode_document(self, scope: Scope, text: str) -> SparseVector: ...

    def encode_query(self, scope: Scope, text: str) -> SparseVector: ...
