"""The stored form of a record, shared by both Qdrant adapters.

A ``Memory`` becomes a flat payload dict (``to_payload``) and back (``from_payload``). Datetimes are stored as
float epoch seconds (UTC) so range filters are plain float ranges. A record that never expires stores
``NO_EXPIRY`` in ``expires_at``: "not expired at t" is then one indexed range (``expires_at > t``) instead of
an ``is_null OR range`` disjunction.

``narrowing`` turns a ``RecordFilter`` into neutral conditions. It never carries the scope: each adapter
writes the tenant and subject ``must`` conditions itself, in the one function that builds its library's
filter, so the scope is visible where the query is made.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar

import numpy as np

from carnet.domain.records import Kind, Memory, Scope, Source, Status
from carnet.domain.unreadable import DECODE_ERRORS, PAYLOAD_INVALID, Skipped, note
from carnet.errors import Conflict, DependencyUnavailable, InvalidInput
from carnet.ports import AccessUpdate, IndexedMemory, RecordFilter, SparseVector, Vector

PAYLOAD_VERSION = 1
NO_EXPIRY = 1e13  # year ~318,000: above any datetime Python can hold (max year 9999 is ~2.5e11 s)

DENSE = "dense"
SPARSE = "sparse"

TENANT = "tenant"
SUBJECT = "subject"
KIND = "kind"
STATUS = "status"
CATEGORY = "category"
EXPIRES_AT = "expires_at"
ACCESS_COUNT = "access_count"
LAST_ACCESSED_AT = "last_accessed_at"
BLIND_INDEX = "blind_index"
SPECIAL = "special"
PROFILE = "profile"  # PROFILE_MARK on a profile record, absent (null) on the others
PROFILE_MARK = "y"
VALID_FROM = "valid_from"  # indexed: the profile tier asks the engine for the newest records (``newest``)

# plus TENANT, indexed as the tenant key
KEYWORD_INDEXES = (SUBJECT, KIND, STATUS, CATEGORY, BLIND_INDEX, SPECIAL, PROFILE)
FLOAT_INDEXES = (EXPIRES_AT, VALID_FROM)


@dataclass(frozen=True, slots=True)
class Equals:
    key: str
    value: str


@dataclass(frozen=True, slots=True)
class OneOf:
    key: str
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class GreaterThan:
    key: str
    value: float


@dataclass(frozen=True, slots=True)
class NoneOf:
    """Records whose field (a list) holds none of ``values``: a ``must_not`` in Qdrant's terms."""

    key: str
    values: tuple[str, ...]


Condition = Equals | OneOf | GreaterThan | NoneOf


def narrowing(where: RecordFilter) -> list[Condition]:
    """The conditions of ``where`` (kinds, statuses, category, blind token, expiry), without the scope.
    ``None`` means "no condition"; an empty tuple means "nothing matches" (``OneOf`` with no value)."""
    out: list[Condition] = []
    if where.kinds is not None:
        out.append(OneOf(KIND, tuple(k.value for k in where.kinds)))
    if where.statuses is not None:
        out.append(OneOf(STATUS, tuple(s.value for s in where.statuses)))
    if where.category is not None:
        out.append(Equals(CATEGORY, where.category))
    if where.blind_token is not None:
        out.append(Equals(BLIND_INDEX, where.blind_token))  # matches a record listing the token
    if where.hidden_special:
        out.append(NoneOf(SPECIAL, tuple(where.hidden_special)))
    if where.profile_only:
        out.append(Equals(PROFILE, PROFILE_MARK))
    if where.not_expired_at is not None:
        out.append(GreaterThan(EXPIRES_AT, epoch(where.not_expired_at)))
    return out


def epoch(at: datetime) -> float:
    if at.tzinfo is None:
        raise ValueError("naive datetime: the vector store only takes timezone-aware datetimes")
    return at.timestamp()


_MIN_EPOCH = datetime.min.replace(tzinfo=UTC).timestamp()  # 0001-01-01
_MAX_EPOCH = datetime.max.replace(tzinfo=UTC).timestamp()  # 9999-12-31T23:59:59.999999


def from_epoch(value: float) -> datetime:
    """``ValueError`` for a value no ``datetime`` holds (NaN, infinite, outside years 1..9999), never the
    ``OverflowError`` / ``OSError`` the C library would raise for some of them."""
    if not _MIN_EPOCH <= value <= _MAX_EPOCH:  # False for NaN too
        raise ValueError("a stored date is outside years 1 to 9999")
    return datetime.fromtimestamp(value, UTC)


def _epoch_or_none(at: datetime | None) -> float | None:
    return None if at is None else epoch(at)


def _datetime_or_none(value: Any) -> datetime | None:
    return None if value is None else from_epoch(float(value))


def check_point_id(memory_id: str) -> str:
    """A record id must be a canonical UUID string (what the store hands back), or it would not round-trip."""
    if not is_point_id(memory_id):
        raise ValueError(f"record id {memory_id!r} is not a canonical UUID string")
    return memory_id


def is_point_id(value: str) -> bool:
    try:
        return str(uuid.UUID(value)) == value
    except ValueError:
        return False


def parse_offset(offset: str | None) -> str | None:
    """A scroll cursor comes back from API callers: reject anything that is not one we issued."""
    if offset is None or is_point_id(offset):
        return offset
    raise InvalidInput("invalid page cursor")


def dense_values(dense: Vector, dim: int) -> list[float]:
    if dense.shape != (dim,):
        raise ValueError(f"dense vector of shape {dense.shape}, expected ({dim},)")
    if not np.isfinite(dense).all():
        raise ValueError("dense vector with a NaN or infinite value")
    values: list[float] = np.asarray(dense, dtype=np.float32).tolist()
    return values


def check_sparse(sparse: SparseVector) -> SparseVector:
    """Refuse what the engine would take badly.

    qdrant-edge 0.9.0 accepts a sparse vector with more indices than values, panics applying it,
    and panics again replaying its write-ahead log at every load after: the shard is lost.
    """
    if len(sparse.indices) != len(sparse.values):
        raise ValueError("sparse vector with a different number of indices and values")
    if len(set(sparse.indices)) != len(sparse.indices):
        raise ValueError("sparse vector with a repeated index")
    if any(not 0 <= i < 2**32 for i in sparse.indices):
        raise ValueError("sparse vector index outside [0, 2^32)")
    if not all(math.isfinite(v) for v in sparse.values):
        raise ValueError("sparse vector with a NaN or infinite value")
    return sparse


def check_scope(scope: Scope, memories: Iterable[Memory]) -> None:
    for m in memories:
        if m.scope != scope:
            raise ValueError(f"record {m.id} belongs to another scope than the one given")


def to_payload(memory: Memory) -> dict[str, Any]:
    """Every field of the record except its id (the point id) and its vectors."""
    return {
        "v": PAYLOAD_VERSION,
        TENANT: memory.scope.tenant,
        SUBJECT: memory.scope.subject,
        KIND: memory.kind.value,
        STATUS: memory.status.value,
        "text": memory.text,
        "pseudo_text": memory.pseudo_text,
        CATEGORY: memory.category,
        "tags": list(memory.tags),
        "importance": memory.importance,
        "confidence": memory.confidence,
        ACCESS_COUNT: memory.access_count,
        "reinforcement_count": memory.reinforcement_count,
        LAST_ACCESSED_AT: _epoch_or_none(memory.last_accessed_at),
        VALID_FROM: epoch(memory.valid_from),
        "valid_to": _epoch_or_none(memory.valid_to),
        "recorded_at": epoch(memory.recorded_at),
        "updated_at": epoch(memory.updated_at),
        EXPIRES_AT: NO_EXPIRY if memory.expires_at is None else epoch(memory.expires_at),
        "retention": memory.retention,
        "superseded_by": memory.superseded_by,
        "sources": [source_json(s) for s in memory.sources],
        "agent_id": memory.agent_id,
        "session_id": memory.session_id,
        BLIND_INDEX: list(memory.blind_index),
        SPECIAL: list(memory.special),
        "meta": memory.meta,
        PROFILE: PROFILE_MARK if memory.profile else None, "contested_by": list(memory.contested_by),
    }


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("a stored text field is not a string")
    return value


def source_json(s: Source) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": s.kind, "ref": s.ref, "session_id": s.session_id}
    if s.request is not None:
        out["request"] = s.request
    if s.fingerprint is not None:
        out["fingerprint"] = s.fingerprint
    return out


def source_from_json(s: Mapping[str, Any]) -> Source:
    return Source(s["kind"], s["ref"], s.get("session_id"), s.get("request"), s.get("fingerprint"))


def from_payload(point_id: str, p: Mapping[str, Any]) -> Memory:
    expires = p.get(EXPIRES_AT)
    return Memory(
        id=point_id,
        scope=Scope(tenant=p[TENANT], subject=p[SUBJECT]),
        kind=Kind(p[KIND]),
        text=_text(p["text"]),
        pseudo_text=_text(p["pseudo_text"]),
        recorded_at=from_epoch(p["recorded_at"]),
        valid_from=from_epoch(p[VALID_FROM]),
        updated_at=from_epoch(p["updated_at"]),
        category=p.get(CATEGORY),
        tags=tuple(p.get("tags") or ()),
        importance=float(p.get("importance", 0.5)),
        confidence=float(p.get("confidence", 0.7)),
        access_count=int(p.get(ACCESS_COUNT, 0)),
        reinforcement_count=int(p.get("reinforcement_count", 0)),
        last_accessed_at=_datetime_or_none(p.get(LAST_ACCESSED_AT)),
        valid_to=_datetime_or_none(p.get("valid_to")),
        expires_at=None if expires is None or expires >= NO_EXPIRY else from_epoch(expires),
        retention=p.get("retention", "default"),
        status=Status(p.get(STATUS, Status.ACTIVE.value)),
        superseded_by=p.get("superseded_by"),
        sources=tuple(source_from_json(s) for s in p.get("sources") or ()),
        agent_id=p.get("agent_id"),
        session_id=p.get("session_id"),
        blind_index=tuple(p.get(BLIND_INDEX) or ()),
        special=tuple(p.get(SPECIAL) or ()),
        meta=p.get("meta"),
        profile=p.get(PROFILE) == PROFILE_MARK,
        contested_by=tuple(c for c in p.get("contested_by") or () if isinstance(c, str)),  # ids only, if damaged
    )


P = TypeVar("P")


class Point(Protocol):
    """A stored point as both engines return it (qdrant-edge's and qdrant-client's records)."""

    @property
    def id(self) -> Any: ...

    @property
    def payload(self) -> Mapping[str, Any] | None: ...


def decoded(points: Iterable[Point], skipped: Skipped | None) -> list[Memory]:
    """The records of ``points`` that decode; each one that does not (a field missing, of the wrong
    type, a date outside what ``datetime`` holds) is noted in ``skipped`` and left out, so one damaged
    payload never fails a whole page."""
    out = []
    for point in points:
        memory = decode(str(point.id), point.payload, skipped)
        if memory is not None:
            out.append(memory)
    return out


def new_points(scope: Scope, items: Sequence[IndexedMemory], point: Callable[[IndexedMemory], P],
               owners: Callable[[list[str]], Iterable[Point]]) -> list[P]:
    """The engine's points for ``items``, once every item is checked to belong to ``scope`` and no id
    is found taken by another scope: ``owners(ids)`` reads the stored points of those ids (with their
    tenant and subject), and a point id taken elsewhere is a ``Conflict``, never overwritten."""
    if not items:
        return []
    check_scope(scope, (i.memory for i in items))
    points = [point(i) for i in items]
    for stored in owners([i.memory.id for i in items]):
        owner = stored.payload or {}
        if (owner.get(TENANT), owner.get(SUBJECT)) != (scope.tenant, scope.subject):
            raise Conflict(f"record id {stored.id} is already taken", memory_id=str(stored.id))
    return points


def point_ids(ids: Iterable[str]) -> list[str]:
    """The ids asked for that can name a point, each once, in the order asked."""
    return list(dict.fromkeys(i for i in ids if is_point_id(i)))


def in_order(wanted: Sequence[str], points: Iterable[Point], skipped: Skipped | None) -> list[Memory]:
    """The decoded records of ``points`` in the order of ``wanted``; an id not found is absent."""
    found = {m.id: m for m in decoded(points, skipped)}
    return [found[i] for i in wanted if i in found]


def decode(point_id: str, payload: Mapping[str, Any] | None, skipped: Skipped | None) -> Memory | None:
    try:
        return from_payload(point_id, payload or {})
    except DECODE_ERRORS:
        note(skipped, point_id, PAYLOAD_INVALID)
        return None


ACCESS_FIELDS = (ACCESS_COUNT, LAST_ACCESSED_AT)  # all ``record_access`` reads of a point's payload

AccessState = tuple[int, float | None]  # (access_count, last_accessed_at as epoch seconds)


def access_states(points: Iterable[Point]) -> dict[str, AccessState]:
    """The access fields of points read with only ``ACCESS_FIELDS`` (no whole record decoded: the
    statistics of a search's records are written after every search). A point whose fields do not
    read back as a count and a time is left out, so its statistics are left as they are."""
    out: dict[str, AccessState] = {}
    for point in points:
        p = point.payload or {}
        count, last = p.get(ACCESS_COUNT, 0), p.get(LAST_ACCESSED_AT)
        if isinstance(count, bool) or not isinstance(count, int):
            continue
        if last is not None and not _finite_number(last):
            continue
        out[str(point.id)] = (count, None if last is None else float(last))
    return out


def _finite_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def access_payloads(current: Mapping[str, AccessState], updates: Sequence[AccessUpdate]) -> dict[str, dict[str, Any]]:
    """New ``access_count`` / ``last_accessed_at`` per record found (``current``: ``access_states``);
    updates for missing ids are dropped.

    Several updates of one id add up; ``last_accessed_at`` never moves backwards.
    """
    out: dict[str, dict[str, Any]] = {}
    for u in updates:
        state = current.get(u.memory_id)
        if state is None:
            continue
        prev = out.get(u.memory_id, {ACCESS_COUNT: state[0], LAST_ACCESSED_AT: state[1]})
        last = prev[LAST_ACCESSED_AT]
        at = epoch(u.at)
        out[u.memory_id] = {
            ACCESS_COUNT: prev[ACCESS_COUNT] + u.count_delta,
            LAST_ACCESSED_AT: at if last is None else max(last, at),
        }
    return out


def grouped_access(payloads: Mapping[str, dict[str, Any]]) -> list[tuple[list[str], dict[str, Any]]]:
    """``access_payloads`` as one write per distinct pair of values: the records one read returned share
    its time, and mostly their count, so a flush names many ids per write instead of one each."""
    groups: dict[tuple[Any, ...], tuple[list[str], dict[str, Any]]] = {}
    for memory_id, fields in payloads.items():
        key = tuple(fields.get(f) for f in ACCESS_FIELDS)
        groups.setdefault(key, ([], fields))[0].append(memory_id)
    return list(groups.values())


def moved(old: Scope, items: Sequence[tuple[Memory, SparseVector]],
          stored: Iterable[tuple[str, Mapping[str, Any] | None, Any]]) -> list[IndexedMemory]:
    """``VectorIndex.rescope`` for both adapters: the records to write back, each with the dense
    vector its point has now. ``stored`` is (point id, payload with tenant and subject, vectors) of the
    points found; one owned by another scope than ``old`` is refused, one not found is skipped."""
    dense: dict[str, Any] = {}
    for point_id, payload, vectors in stored:
        owner = payload or {}
        if (owner.get(TENANT), owner.get(SUBJECT)) != (old.tenant, old.subject):
            raise Conflict(f"record id {point_id} is not the moved subject's", memory_id=point_id)
        if not isinstance(vectors, Mapping) or DENSE not in vectors:
            raise DependencyUnavailable("the store returned a point without its dense vector")
        dense[point_id] = vectors[DENSE]
    return [IndexedMemory(m, np.asarray(dense[m.id], dtype=np.float32), sparse) for m, sparse in items if m.id in dense]
