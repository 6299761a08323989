"""An LRU cache in front of the query embedder, with hit/miss counters (reported by the benchmarks)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

from carnet.ports import Embedder, Vector


class CachedEmbedder:
    """Wraps an ``Embedder``: passages go straight through (batched by the caller), queries are cached.

    The cache is keyed by the query text, which may carry personal data: it lives in memory only and
    is bounded; ``clear()`` empties it (called on erasure)."""

    def __init__(self, inner: Embedder, *, size: int) -> None:
        self._inner = inner
        self._size = size
        self._cache: OrderedDict[str, Vector] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def dim(self) -> int:
        return self._inner.dim

    def embed_passages(self, texts: Sequence[str]) -> Vector:
        return self._inner.embed_passages(texts)

    def embed_query(self, text: str) -> Vector:
        if self._size:
            with self._lock:
                hit = self._cache.get(text)
                if hit is not None:
                    self._cache.move_to_end(text)
                    self.hits += 1
                    return hit
        vec = self._inner.embed_query(text)
        with self._lock:
            self.misses += 1
            if self._size:
                self._cache[text] = vec
                if len(self._cache) > self._size:
                    self._cache.popitem(last=False)
        return vec

    def hit_rate(self) -> float:
        total = self.hits + self.misses
        return self.hits / total if total else 0.0

    def reset_stats(self) -> None:
        self.hits = self.misses = 0

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()
