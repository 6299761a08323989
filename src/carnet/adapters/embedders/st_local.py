"""Production embedder: a sentence-transformers model loaded from a local directory (never a hub)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from carnet.adapters.embedders.base import LoadedModel
from carnet.ports import Vector


class SentenceTransformerEmbedder(LoadedModel):
    """``Embedder`` over ``sentence_transformers.SentenceTransformer`` from a local path.

    ``query_prefix``/``passage_prefix`` serve e5-class models (``"query: "``, ``"passage: "``).
    """

    def __init__(
        self,
        *,
        path: Path,
        device: str = "cpu",
        batch_size: int = 64,
        query_prefix: str = "",
        passage_prefix: str = "",
    ) -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ImportError(
                "this embedder needs `pip install 'carnet[st]'` (install torch==2.13.0 first on CPU hosts)"
            ) from exc
        if not path.is_dir():
            raise FileNotFoundError(f"embedding model directory not found: {path}")
        self._model = SentenceTransformer(str(path), device=device, local_files_only=True)
        # sentence-transformers 6 renamed the accessor; older releases only have the first name.
        getter = getattr(self._model, "get_embedding_dimension", None) or (
            self._model.get_sentence_embedding_dimension
        )
        dim = getter()
        if dim is None:
            raise ValueError(f"cannot tell the embedding size of the model at {path}")
        self._dim = int(dim)
        self._id = f"st/{path.name}"
        self._batch = batch_size
        self._qp = query_prefix
        self._pp = passage_prefix

    def embed_passages(self, texts: Sequence[str]) -> Vector:
        if not texts:
            return self._no_vectors()
        out = self._model.encode(
            [self._pp + t for t in texts],
            batch_size=self._batch,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(out, dtype=np.float32)

    def embed_query(self, text: str) -> Vector:
        return np.asarray(self.embed_queries([text])[0], dtype=np.float32)

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        """Several queries in one model call (``adapters.embed_batching``)."""
        if not texts:
            return self._no_vectors()
        out = self._model.encode(
            [self._qp + t for t in texts], batch_size=self._batch, normalize_embeddings=True, convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(out, dtype=np.float32)
