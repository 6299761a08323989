"""The few of Qdrant's request validation rules (its ``validator`` annotations, answered 422 "Validation
error in JSON body: [...]") that a body can break once qdrant-client's models have parsed it, for the
requests this server reproduces: limits, shard numbers and replication and write consistency factors
of at least 1, vector sizes of 1 to 65536, sparse vectors with
as many values as indices and no index twice (qdrant-edge does not check the last two, and a sparse
vector with more indices than values leaves a 0.9.0 shard unreadable).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from qdrant_client.http import models as m

MAX_DIM = 65536


class Invalid(ValueError):
    def __init__(self, errors: list[str]) -> None:
        super().__init__(f"Validation error in JSON body: [{', '.join(errors)}]")


def _limit(path: str, limit: int | None) -> Iterator[str]:
    if limit is not None and limit < 1:
        yield f"{path}: value {limit} invalid, must be 1 or larger"


def _sparse(path: str, v: Any) -> Iterator[str]:
    if not isinstance(v, m.SparseVector):
        return
    if len(v.indices) != len(v.values):
        yield f"{path}: must be the same length as indices"
    if len(set(v.indices)) != len(v.indices):
        yield f"{path}.indices: must be unique"


def _raise(errors: Iterable[str]) -> None:
    found = list(errors)
    if found:
        raise Invalid(found)


def create_collection(body: m.CreateCollection) -> None:
    vectors = body.vectors if isinstance(body.vectors, dict) else {}
    errors = [f"vectors.{name}.size: value {p.size} invalid, must be in 1..={MAX_DIM}"
              for name, p in vectors.items() if not 1 <= p.size <= MAX_DIM]
    for name in ("shard_number", "replication_factor", "write_consistency_factor"):
        errors += _limit(name, getattr(body, name))
    _raise(errors)


def points(body: list[m.PointStruct], path: str = "points") -> None:
    _raise(_points(body, path))


def _points(body: list[m.PointStruct], path: str) -> Iterator[str]:
    for i, p in enumerate(body):
        if isinstance(p.vector, dict):
            for name, v in p.vector.items():
                yield from _sparse(f"{path}[{i}].vector.{name}", v)


def batch(body: m.UpdateOperations) -> None:
    errors: list[str] = []
    for i, op in enumerate(body.operations):
        if isinstance(op, m.UpsertOperation) and isinstance(op.upsert, m.PointsList):
            errors += _points(op.upsert.points, f"operations[{i}].upsert.points")
    _raise(errors)


def query(body: m.QueryRequest, path: str = "") -> None:
    _raise(_query(body, path))


def query_batch(body: m.QueryRequestBatch) -> None:
    _raise(e for i, q in enumerate(body.searches) for e in _query(q, f"searches[{i}]."))


def _query(q: m.QueryRequest | m.Prefetch, path: str) -> Iterator[str]:
    yield from _limit(f"{path}limit", q.limit)
    nearest = q.query.nearest if isinstance(q.query, m.NearestQuery) else q.query
    yield from _sparse(f"{path}query", nearest)
    prefetch = q.prefetch if isinstance(q.prefetch, list) else [q.prefetch] if q.prefetch else []
    for i, p in enumerate(prefetch):
        yield from _query(p, f"{path}prefetch[{i}].")


def scroll(body: m.ScrollRequest) -> None:
    _raise(_limit("limit", body.limit))
