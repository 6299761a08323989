"""The vector store: records with their dense and keyword vectors, searched within one scope, as stored."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

import numpy as np
import numpy.typing as npt

from carnet.domain.records import Kind, Memory, Scope, Status
from carnet.domain.unreadable import Skipped

Vector = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class SparseVector:
    indices: list[int]
    values: list[float]


@dataclass(frozen=True, slots=True)
class IndexedMemory:
    """A record with the vectors computed from its ``pseudo_text`` (never from ``text``)."""

    memory: Memory
    dense: Vector
    sparse: SparseVector


@dataclass(frozen=True, slots=True)
class RecordFilter:
    """Narrowing inside a scope. The scope itself is not part of it: adapters add it, always."""

    kinds: tuple[Kind, ...] | None = None
    statuses: tuple[Status, ...] | None = (Status.ACTIVE,)
    category: str | None = None
    blind_token: str | None = None  # records whose blind index holds this token (exact identifier lookup)
    hidden_special: tuple[str, ...] = ()  # leave out records flagged with any of these special categories
    not_expired_at: datetime | None = None  # drop records whose expires_at is before this instant
    profile_only: bool = False  # only records flagged as profile records (``Memory.profile``)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A record found by one retriever, with that retriever's raw score."""

    memory: Memory
    score: float
    vector: Vector | None = None


@dataclass(frozen=True, slots=True)
class HybridHits:
    dense: list[Candidate] = field(default_factory=list)  # score = cosine similarity
    sparse: list[Candidate] = field(default_factory=list)  # score = BM25-style dot product


@dataclass(frozen=True, slots=True)
class AccessUpdate:
    memory_id: str
    count_delta: int
    at: datetime


class VectorIndex(Protocol):
    """Records and their vectors, as stored. Every method takes a ``Scope``; there is no unscoped query.

    Storage only: what is written is what is read back. Sealing record texts is not this port's
    business: the services use a :class:`carnet.ports.records.RecordStore`, which seals on the way
    in and opens on the way out over one of these (``carnet.crypto.sealed_index``).

    Every read (``hybrid_search``, ``get``, ``scroll``) leaves out a record that cannot be decoded
    (a damaged payload) and notes it in ``skipped`` (:mod:`carnet.domain.unreadable`): one damaged
    record never fails the others. The cursor still moves past it. An unavailable dependency is
    raised, never skipped."""

    def upsert(self, scope: Scope, items: Sequence[IndexedMemory]) -> None: ...

    def replace_payload(self, scope: Scope, memories: Sequence[Memory]) -> None:
        """Rewrite the stored record fields (status, counters…) keeping the vectors."""
        ...

    def hybrid_search(self, scope: Scope, *, dense: Vector, sparse: SparseVector | None, limit: int,
                      where: RecordFilter, with_vectors: bool = False, skipped: Skipped | None = None) -> HybridHits:
        """Candidates for ranking, nearest on ``dense`` and, when given, on ``sparse``. ``with_vectors``:
        each candidate only the keyword retriever found carries its dense vector, so that its cosine can
        be computed (a dense hit's score already is its cosine: it carries none)."""
        ...

    def get(self, scope: Scope, ids: Sequence[str], *, skipped: Skipped | None = None) -> list[Memory]:
        """The records of these ids in the order asked; unknown ids are absent."""
        ...

    def scroll(self, scope: Scope, *, where: RecordFilter, limit: int, offset: str | None = None,
               skipped: Skipped | None = None) -> tuple[list[Memory], str | None]:
        """One page in a stable order, and the cursor of the next one (``None`` after the last)."""
        ...

    def newest(self, scope: Scope, *, where: RecordFilter, limit: int,
               skipped: Skipped | None = None) -> list[Memory]:
        """At most ``limit`` records, the latest ``valid_from`` first, chosen by the engine among all those
        that match (an index on ``valid_from``): not the first ones of a page."""
        ...

    def count(self, scope: Scope, *, where: RecordFilter) -> int: ...

    def delete(self, scope: Scope, ids: Sequence[str]) -> None: ...

    def record_access(self, scope: Scope, updates: Sequence[AccessUpdate]) -> None: ...

    def rescope(self, old: Scope, new: Scope, items: Sequence[tuple[Memory, SparseVector]]) -> None:
        """Move records of ``old`` to ``new`` (the subject was re-hashed): each keeps its dense vector
        and takes the given record fields (scope ``new``) and sparse vector, one point at a time
        atomically. Ids must be ``old``'s; a record no longer there is skipped."""
        ...

    def check(self) -> None:
        """Raise ``DependencyUnavailable`` when the store cannot answer."""
        ...

    def compact(self) -> bool:
        """Reclaim the space of deleted points (their sealed payloads leave the segment files);
        ``True`` if anything was rewritten. A no-op for stores that vacuum on their own."""
        ...

    def close(self) -> None: ...
