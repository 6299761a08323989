"""Prometheus metrics of one Carnet process. No label ever carries a subject or personal data."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.registry import Collector

from carnet.services.query_cache import CachedEmbedder


class _QueryCacheCollector(Collector):
    def __init__(self, cache: CachedEmbedder) -> None:
        self._cache = cache

    def collect(self) -> Iterator[Metric]:
        yield CounterMetricFamily("carnet_query_cache_hits", "Query embeddings served from cache",
                                  value=self._cache.hits)
        yield CounterMetricFamily("carnet_query_cache_misses", "Query embeddings computed",
                                  value=self._cache.misses)


def registry_for(cache: CachedEmbedder) -> CollectorRegistry:
    """A registry per process/container (never the global one: tests build several containers)."""
    registry = CollectorRegistry(auto_describe=True)
    registry.register(_QueryCacheCollector(cache))
    return registry
