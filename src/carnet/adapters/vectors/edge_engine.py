"""The qdrant-edge shard's configuration and the translation of the engine's failures: what
``qdrant_edge.EdgeVectorIndex`` opens a shard with, and how a bare engine ``Exception`` becomes ours."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from qdrant_edge import (
    Distance,
    EdgeConfig,
    EdgeOptimizersConfig,
    EdgeSparseVectorParams,
    EdgeVectorParams,
    HnswIndexConfig,
    Modifier,
)

from carnet.adapters.vectors import payload as pl
from carnet.errors import DependencyUnavailable

# The engine's search pool: one thread, so that a search runs in the calling thread. The bindings keep the
# interpreter lock for the whole call, so a pool overlaps no Python work; the engine's default (8 threads on
# this 2-CPU machine) spent 1.8-3.7 core-ms a request in its threads under load at 100k memories, where the
# search in the caller costs ~0.5 (docs/benchmarks.md, "The server's own CPU per assemble", issue 49).
SEARCH_THREADS = 1


def config(dim: int) -> EdgeConfig:
    return EdgeConfig(
        vectors={pl.DENSE: EdgeVectorParams(size=dim, distance=Distance.Cosine)},
        sparse_vectors={pl.SPARSE: EdgeSparseVectorParams(modifier=Modifier.Idf)},
        hnsw_config=HnswIndexConfig(m=0, ef_construct=100, full_scan_threshold=10_000),
        # Vacuum a segment as soon as it holds one deleted point (the defaults wait for 20 % of a
        # segment of 1000+ vectors): a record deleted by retention or erasure must leave the files
        # at the next ``compact``. The engine optimises only when asked (``compact``).
        optimizers=EdgeOptimizersConfig(deleted_threshold=0.0, vacuum_min_vector_number=0),
        max_search_threads=SEARCH_THREADS,
    )


@contextmanager
def engine_errors(what: str) -> Iterator[None]:
    """The engine raises bare ``Exception`` for its own failures; anything more specific is ours."""
    try:
        yield
    except Exception as exc:
        if type(exc) is not Exception:
            raise
        raise DependencyUnavailable(f"vector store: {what} failed: {exc}") from exc
