"""qdrant-client's REST models (``qdrant_client.http.models``, generated from Qdrant's OpenAPI) to
qdrant-edge's Python types, and the engine's answers back to REST models.

Only the shapes the test server reproduces are converted; a valid shape it does not reproduce
raises ``NotReproduced`` (answered 501, never silently approximated).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, overload
from uuid import UUID

import qdrant_edge as edge
from qdrant_client.http import models as m

DEFAULT_LIMIT = 10  # Qdrant's default ``limit`` for query and scroll
DEFAULT_RRF_K = 2  # Qdrant's default RRF constant (a point at 0-based rank r adds 1 / (r + k))


class NotReproduced(Exception):
    """A request Qdrant would accept but this test server does not reproduce."""


def _listed(value: Any) -> list[Any]:
    """Qdrant's ``must``/``should``/``must_not``/``prefetch`` take one item or a list."""
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def point_id(value: m.ExtendedPointId) -> int | str:
    return str(value) if isinstance(value, UUID) else value


def out_id(value: Any) -> int | str:
    """The engine answers UUIDs as ``UUID`` or ``str`` and numbers as ``int``."""
    return value if isinstance(value, int) else str(value)


# -- filters -------------------------------------------------------------------------------------


@overload
def flt(f: m.Filter) -> edge.Filter: ...
@overload
def flt(f: None) -> None: ...
@overload
def flt(f: m.Filter | None) -> edge.Filter | None: ...
def flt(f: m.Filter | None) -> edge.Filter | None:
    if f is None:
        return None
    min_should = None
    if f.min_should is not None:
        min_should = edge.MinShould([condition(c) for c in f.min_should.conditions], f.min_should.min_count)
    return edge.Filter(
        must=[condition(c) for c in _listed(f.must)] or None,
        should=[condition(c) for c in _listed(f.should)] or None,
        must_not=[condition(c) for c in _listed(f.must_not)] or None,
        min_should=min_should,
    )


def condition(c: m.Condition) -> Any:
    match c:
        case m.Filter():
            return flt(c)
        case m.FieldCondition():
            return _field(c)
        case m.HasIdCondition(has_id=ids):
            return edge.HasIdCondition({point_id(i) for i in ids})
        case m.IsEmptyCondition(is_empty=field):
            return edge.IsEmptyCondition(field.key)
        case m.IsNullCondition(is_null=field):
            return edge.IsNullCondition(field.key)
        case m.HasVectorCondition(has_vector=name):
            return edge.HasVectorCondition(name)
    raise NotReproduced(f"filter condition {type(c).__name__}")


def _field(c: m.FieldCondition) -> edge.FieldCondition:
    if c.geo_bounding_box or c.geo_radius or c.geo_polygon or c.values_count:
        raise NotReproduced("geo and values_count conditions")
    return edge.FieldCondition(
        c.key, match=_match(c.match), range=_range(c.range), is_empty=c.is_empty, is_null=c.is_null
    )


def _match(match: m.Match | None) -> Any:
    match match:
        case None:
            return None
        case m.MatchValue(value=value):
            return edge.MatchValue(value)
        case m.MatchAny(any=values):
            return edge.MatchAny(_any(values))
        case m.MatchExcept(except_=values):
            return edge.MatchExcept(_any(values))
        case m.MatchText(text=text):
            return edge.MatchText(text)
    raise NotReproduced(f"match {type(match).__name__}")


def _any(values: m.AnyVariants) -> list[str] | list[int]:
    return [v for v in values if isinstance(v, str)] or [v for v in values if isinstance(v, int)]


def _range(r: m.RangeInterface | None) -> edge.RangeFloat | None:
    if r is None:
        return None
    if not isinstance(r, m.Range):
        raise NotReproduced("datetime ranges")
    return edge.RangeFloat(gte=r.gte, gt=r.gt, lte=r.lte, lt=r.lt)


# -- points and selectors ------------------------------------------------------------------------


def vector_in(v: Any) -> Any:
    if isinstance(v, m.SparseVector):
        return edge.SparseVector(indices=list(v.indices), values=list(v.values))
    if isinstance(v, list):
        return v
    raise NotReproduced(f"vector input {type(v).__name__} (inference, or a point id)")


def point(p: m.PointStruct) -> edge.Point:
    if not isinstance(p.vector, dict):
        raise NotReproduced("unnamed vectors: the server adapter names its vectors")
    vectors = {name: vector_in(v) for name, v in p.vector.items()}
    return edge.Point(point_id(p.id), vectors, p.payload)


def points(op: m.PointInsertOperations) -> list[edge.Point]:
    if not isinstance(op, m.PointsList):
        raise NotReproduced("the columnar PointsBatch: the server adapter sends a list of points")
    return [point(p) for p in op.points]


def with_payload(w: m.WithPayloadInterface | None, default: bool) -> Any:
    match w:
        case None:
            return default
        case m.PayloadSelectorInclude(include=keys):
            return edge.PayloadSelector.Include(keys)
        case m.PayloadSelectorExclude(exclude=keys):
            return edge.PayloadSelector.Exclude(keys)
    return w


def vectors_out(v: Any) -> m.VectorStructOutput | None:
    if v is None:
        return None
    if isinstance(v, dict):
        return {name: _vector_out(x) for name, x in v.items()}
    return list(v)


def _vector_out(v: Any) -> Any:
    if isinstance(v, edge.SparseVector):
        return m.SparseVector(indices=list(v.indices), values=list(v.values))
    return list(v)


def record(r: edge.Record) -> m.Record:
    return m.Record(id=out_id(r.id), payload=r.payload, vector=vectors_out(r.vector))


def scored(p: edge.ScoredPoint) -> m.ScoredPoint:
    return m.ScoredPoint(id=out_id(p.id), version=p.version, score=p.score, payload=p.payload,
                         vector=vectors_out(p.vector))


# -- queries -------------------------------------------------------------------------------------


def query(q: m.QueryRequest) -> edge.QueryRequest:
    if q.lookup_from is not None:
        raise NotReproduced("lookup_from")
    return edge.QueryRequest(
        limit=q.limit if q.limit is not None else DEFAULT_LIMIT,
        offset=q.offset,
        query=_scoring(q.query, q.using),
        prefetches=[_prefetch(p) for p in _listed(q.prefetch)] or None,
        with_vector=q.with_vector if q.with_vector is not None else False,
        with_payload=with_payload(q.with_payload, False),
        filter=flt(q.filter),
        score_threshold=q.score_threshold,
        params=_params(q.params),
    )


def _prefetch(p: m.Prefetch) -> edge.Prefetch:
    if p.lookup_from is not None:
        raise NotReproduced("lookup_from")
    return edge.Prefetch(
        limit=p.limit if p.limit is not None else DEFAULT_LIMIT,
        query=_scoring(p.query, p.using),
        prefetches=[_prefetch(x) for x in _listed(p.prefetch)] or None,
        params=_params(p.params),
        filter=flt(p.filter),
        score_threshold=p.score_threshold,
    )


def _scoring(q: m.QueryInterface | None, using: str | None) -> Any:
    match q:
        case None:
            return None
        case m.NearestQuery(nearest=vector, mmr=None):
            return edge.Query.Nearest(vector_in(vector), using=using)
        case m.FusionQuery(fusion=m.Fusion.RRF):
            return edge.Fusion.Rrf(k=DEFAULT_RRF_K)
        case m.FusionQuery(fusion=m.Fusion.DBSF):
            return edge.Fusion.Dbsf()
        case m.RrfQuery(rrf=rrf):
            return edge.Fusion.Rrf(k=rrf.k if rrf.k is not None else DEFAULT_RRF_K, weights=rrf.weights)
        case list() | m.SparseVector():
            return edge.Query.Nearest(vector_in(q), using=using)
    raise NotReproduced(f"query {type(q).__name__}")


def _params(p: m.SearchParams | None) -> edge.SearchParams | None:
    if p is None:
        return None
    if p.quantization is not None or p.acorn is not None:
        raise NotReproduced("quantization and ACORN search parameters")
    idf = None
    if isinstance(p.idf, m.IdfCorpusParams):
        idf = edge.IdfParams(corpus=flt(p.idf.corpus))
    return edge.SearchParams(hnsw_ef=p.hnsw_ef, exact=bool(p.exact), indexed_only=bool(p.indexed_only), idf=idf)


def scroll(r: m.ScrollRequest) -> edge.ScrollRequest:
    return edge.ScrollRequest(
        offset=point_id(r.offset) if r.offset is not None else None,
        limit=r.limit if r.limit is not None else DEFAULT_LIMIT,
        filter=flt(r.filter),
        with_payload=with_payload(r.with_payload, True),
        with_vector=r.with_vector if r.with_vector is not None else False,
        order_by=order_by(r.order_by),
    )


def order_by(o: m.OrderByInterface | None) -> edge.OrderBy | None:
    """A key (ascending) or ``OrderBy`` (key, direction); ``start_from`` is not reproduced."""
    if o is None:
        return None
    if isinstance(o, str):
        return edge.OrderBy(o)
    if o.start_from is not None:
        raise NotReproduced("order_by.start_from in scroll")
    return edge.OrderBy(o.key, edge.Direction.Desc if o.direction == m.Direction.DESC else edge.Direction.Asc)


def ids(values: Sequence[m.ExtendedPointId]) -> list[edge.PointId]:
    return [point_id(i) for i in values]
