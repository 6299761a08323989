"""An LRU cache in front of the query embedder, one per tenant, with hit/miss counters (reported by
the benchmarks and ``/metrics``)."""

from __future__ import annotations

import threading
from collections import OrderedDict

from carnet.ports import Embedder, EmbedderFront, Vector


class CachedEmbedder(EmbedderFront):
    """Wraps an ``Embedder``: passages go straight through (batched by the caller), queries are cached.

    Each tenant has its own LRU of ``size`` entries: a tenant's question never hits, evicts or is
    cleared by another tenant's, so the time of an answer tells a tenant nothing about what another
    asked. The cache is keyed by the (pseudonymised) query text, which may still carry personal data:
    it lives in memory only and is bounded; ``clear(tenant)`` empties a tenant's (erasure, forget,
    retention), ``clear()`` all of them."""

    def __init__(self, inner: Embedder, *, size: int) -> None:
        super().__init__(inner)
        self._size = size
        self._caches: dict[str, OrderedDict[str, Vector]] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def embed_query(self, text: str, *, tenant: str) -> Vector:
        if self._size:
            with self._lock:
                cache = self._caches.get(tenant)
                hit = None if cache is None else cache.get(text)
                if cache is not None and hit is not None:
                    cache.move_to_end(text)
                    self.hits += 1
                    return hit
        vec = self.inner.embed_query(text)
        with self._lock:
            self.misses += 1
            if self._size:
                cache = self._caches.setdefault(tenant, OrderedDict())
                cache[text] = vec
                if len(cache) > self._size:
                    cache.popitem(last=False)
        return vec

    def clear(self, tenant: str | None = None) -> None:
        """Drop ``tenant``'s cached query embeddings (every tenant's when ``None``)."""
        with self._lock:
            if tenant is None:
                self._caches.clear()
            else:
                self._caches.pop(tenant, None)
