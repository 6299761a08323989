"""What both engines' answers to a hybrid query become: the candidates of each retriever, decoded once.

qdrant-edge's ``ScoredPoint`` converts each property from Rust on every access, and qdrant-client's is
a pydantic model: either way each property of a point is read once here. The embedded shard asks for
ids and scores only and passes its records (``edge_cache``): then no payload is read at all."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

import numpy as np

from carnet.adapters.vectors import payload as pl
from carnet.domain.records import Memory
from carnet.domain.unreadable import Skipped
from carnet.ports import Candidate, HybridHits


class ScoredPoint(Protocol):
    @property
    def id(self) -> Any: ...

    @property
    def score(self) -> float: ...

    @property
    def payload(self) -> Mapping[str, Any] | None: ...

    @property
    def vector(self) -> Any: ...


def hybrid_hits(dense: Sequence[ScoredPoint], sparse: Sequence[ScoredPoint] | None, *, with_vectors: bool,
                skipped: Skipped | None, records: Mapping[str, Memory] | None = None) -> HybridHits:
    """The dense and (when asked) sparse retrievers' hits; a point found by both is decoded once and
    carries each retriever's own score. ``with_vectors``: a sparse hit the dense retriever did not
    return carries its dense vector (read from the engine's answer, converted once); dense hits never
    do, their score is their cosine. A hit whose payload does not decode is noted in ``skipped``.
    ``records``: the hits' records by id, for points returned without payload; a hit absent from it is
    left out (the reader of ``records`` noted it if it did not decode)."""
    dense_hits = _candidates(dense, False, skipped, None, records)
    if sparse is None:
        return HybridHits(dense=dense_hits, sparse=[])
    known = {c.memory.id: c for c in dense_hits}
    return HybridHits(dense=dense_hits, sparse=_candidates(sparse, with_vectors, skipped, known, records))


def hit_ids(*halves: Sequence[ScoredPoint] | None) -> list[str]:
    """The ids of the points of every half, each once."""
    return list(dict.fromkeys(str(point.id) for half in halves if half for point in half))


def _candidates(points: Sequence[ScoredPoint], with_vectors: bool, skipped: Skipped | None,
                known: dict[str, Candidate] | None, records: Mapping[str, Memory] | None) -> list[Candidate]:
    return [c for point in points if (c := _candidate(point, with_vectors, skipped, known, records)) is not None]


def _candidate(point: ScoredPoint, with_vectors: bool, skipped: Skipped | None,
               known: dict[str, Candidate] | None, records: Mapping[str, Memory] | None) -> Candidate | None:
    point_id, score = str(point.id), float(point.score)
    seen = known.get(point_id) if known else None
    if seen is not None:
        return replace(seen, score=score)
    vectors = point.vector if with_vectors else None
    vector = np.asarray(vectors[pl.DENSE], dtype=np.float32) if isinstance(vectors, dict) else None
    memory = records.get(point_id) if records is not None else pl.decode(point_id, point.payload, skipped)
    return None if memory is None else Candidate(memory=memory, score=score, vector=vector)
