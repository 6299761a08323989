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


class SparseEncoder(Protocol):
    """Keyword vectors whose indices are keyed token hashes (no word is stored in clear)."""

    def encode_document(self, scope: Scope, text: str) -> SparseVector: ...

    def encode_query(self, scope: Scope, text: str) -> SparseVector: ...
