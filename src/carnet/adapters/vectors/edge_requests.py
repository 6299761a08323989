"""What the qdrant-edge adapter sends and reads back: the scoped filter (the only way it builds one:
tenant AND subject first, always), the sparse half of a hybrid query, and hits turned into candidates.
The Qdrant-server adapter's twin is ``qdrant_requests``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from qdrant_edge import (
    FieldCondition,
    Filter,
    HasIdCondition,
    IdfParams,
    MatchAny,
    MatchValue,
    Query,
    QueryRequest,
    RangeFloat,
    SearchParams,
)
from qdrant_edge import SparseVector as EdgeSparse

from carnet.adapters.vectors import payload as pl
from carnet.domain.records import Scope
from carnet.ports import RecordFilter, SparseVector


def scoped_filter(scope: Scope, where: RecordFilter | None = None, ids: Sequence[str] | None = None) -> Filter:
    """The only way this adapter builds a filter: tenant AND subject first, always, then the narrowing."""
    must: list[Any] = [
        FieldCondition(pl.TENANT, match=MatchValue(scope.tenant)),
        FieldCondition(pl.SUBJECT, match=MatchValue(scope.subject)),
    ]
    must_not: list[Any] = []
    for c in pl.narrowing(where) if where is not None else ():
        if isinstance(c, pl.NoneOf):
            must_not.append(FieldCondition(c.key, match=MatchAny(list(c.values))))
        else:
            must.append(_condition(c))
    if ids is not None:
        must.append(HasIdCondition(set(ids)))
    return Filter(must=must, must_not=must_not or None)


def _condition(c: pl.Condition) -> FieldCondition:
    match c:
        case pl.Equals(key, value):
            return FieldCondition(key, match=MatchValue(value))
        case pl.OneOf(key, values):
            return FieldCondition(key, match=MatchAny(list(values)))
        case pl.GreaterThan(key, value):
            return FieldCondition(key, range=RangeFloat(gt=value))
        case pl.NoneOf():
            raise ValueError("NoneOf is a must_not: scoped_filter places it")


def sparse_vector(sparse: SparseVector) -> EdgeSparse:
    """The engine's sparse vector, after ``payload.check_sparse`` refused a malformed one."""
    checked = pl.check_sparse(sparse)
    return EdgeSparse(indices=list(checked.indices), values=list(checked.values))


def dense_request(dense: Any, limit: int, flt: Filter, with_vector: Any) -> QueryRequest:
    """Nearest on ``dense`` (cosine), ids and scores without payload (the records come from
    ``edge_cache``); ``dense`` has been checked by ``payload.dense_values``."""
    return QueryRequest(limit=limit, query=Query.Nearest(dense, using=pl.DENSE), filter=flt, with_payload=False,
                        with_vector=with_vector)


def sparse_request(scope: Scope, sparse: SparseVector, limit: int, flt: Filter, with_vector: Any) -> QueryRequest:
    """Nearest on ``sparse`` (IDF dot product), the IDF statistics taken over the scope's records only;
    ids and scores without payload, like ``dense_request``."""
    return QueryRequest(
        limit=limit,
        query=Query.Nearest(sparse_vector(sparse), using=pl.SPARSE),
        filter=flt,
        with_payload=False,
        with_vector=with_vector,
        params=SearchParams(idf=IdfParams(corpus=scoped_filter(scope))),
    )
