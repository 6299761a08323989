"""What the Qdrant-server adapter sends and reads back: the scoped filter (the only way it builds one:
tenant AND subject first, always), the sparse half of a hybrid query, and hits turned into candidates."""

from __future__ import annotations

from collections.abc import Sequence

from qdrant_client import models

from carnet.adapters.vectors import payload as pl
from carnet.domain.records import Scope
from carnet.ports import RecordFilter, SparseVector


def scoped_filter(scope: Scope, where: RecordFilter | None = None, ids: Sequence[str] | None = None) -> models.Filter:
    """The only way this adapter builds a filter: tenant AND subject first, always, then the narrowing."""
    must: list[models.Condition] = [
        models.FieldCondition(key=pl.TENANT, match=models.MatchValue(value=scope.tenant)),
        models.FieldCondition(key=pl.SUBJECT, match=models.MatchValue(value=scope.subject)),
    ]
    must_not: list[models.Condition] = []
    for c in pl.narrowing(where) if where is not None else ():
        if isinstance(c, pl.NoneOf):
            must_not.append(models.FieldCondition(key=c.key, match=models.MatchAny(any=list(c.values))))
        else:
            must.append(_condition(c))
    if ids is not None:
        must.append(models.HasIdCondition(has_id=list(ids)))
    return models.Filter(must=must, must_not=must_not or None)


def _condition(c: pl.Condition) -> models.FieldCondition:
    match c:
        case pl.Equals(key, value):
            return models.FieldCondition(key=key, match=models.MatchValue(value=value))
        case pl.OneOf(key, values):
            return models.FieldCondition(key=key, match=models.MatchAny(any=list(values)))
        case pl.GreaterThan(key, value):
            return models.FieldCondition(key=key, range=models.Range(gt=value))
        case pl.NoneOf():
            raise ValueError("NoneOf is a must_not: scoped_filter places it")


def sparse_request(
    scope: Scope, sparse: SparseVector, limit: int, flt: models.Filter, with_vector: list[str] | bool,
    shard_key: models.ShardKeyWithFallback | None,
) -> models.QueryRequest:
    checked = pl.check_sparse(sparse)
    vector = models.SparseVector(indices=list(checked.indices), values=list(checked.values))
    return models.QueryRequest(
        query=models.NearestQuery(nearest=vector),
        using=pl.SPARSE,
        filter=flt,
        limit=limit,
        with_payload=True,
        with_vector=with_vector,
        params=models.SearchParams(idf=models.IdfCorpusParams(corpus=scoped_filter(scope))),
        shard_key=shard_key,
    )
