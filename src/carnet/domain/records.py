"""The memory record (DESIGN.md "Memory record") and its value types."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum

from carnet.domain.reconcile.values import later


class Kind(StrEnum):
    FACT = "fact"
    EPISODE = "episode"
    PROCEDURE = "procedure"


class Status(StrEnum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    EXPIRED = "expired"
    DELETED = "deleted"


@dataclass(frozen=True, slots=True)
class Scope:
    """Who a record belongs to. Every vector-store call takes one; adapters filter on both fields.

    ``subject`` is the keyed hash of the caller's subject id, never the id itself.
    """

    tenant: str
    subject: str

    def __post_init__(self) -> None:
        if not self.tenant or not self.subject:
            raise ValueError("a scope needs both a tenant and a subject")


@dataclass(frozen=True, slots=True)
class Source:
    """Provenance: what was said that produced a record."""

    kind: str  # "api", "turn", "intake"
    ref: str  # e.g. a dia_id, an idempotency key, an intake id
    session_id: str | None = None
    request: str | None = None  # the id the request's (namespaced) idempotency key gave, if it had one
    fingerprint: str | None = None  # keyed hash of that request's body: the same key with another is refused


class RetentionStart(StrEnum):
    """What a retention class counts its days from."""

    VALID_FROM = "valid_from"  # the record's own date: ``expires_at`` is set at write time
    RELATIONSHIP_END = "relationship_end"  # the end of the subject's relationship (catalog), see maintain


@dataclass(frozen=True, slots=True)
class RetentionClass:
    name: str
    days: int | None  # None: kept until erased
    after: RetentionStart = RetentionStart.VALID_FROM

    def expires_at(self, start: datetime) -> datetime | None:
        """The write-time expiry. ``None`` for a class counted from the end of the relationship: no
        date is known while the relationship is open, so ``carnet maintain`` applies it instead."""
        if self.days is None or self.after is RetentionStart.RELATIONSHIP_END:
            return None
        return later(start, self.days)


MAX_CONTESTERS = 8  # the newer notes a record keeps as contesting it (a long-lived record meets many)


@dataclass(frozen=True, slots=True)
class Memory:
    id: str
    scope: Scope
    kind: Kind
    text: str
    pseudo_text: str
    recorded_at: datetime
    valid_from: datetime
    updated_at: datetime
    category: str | None = None
    tags: tuple[str, ...] = ()
    importance: float = 0.5
    confidence: float = 0.7
    access_count: int = 0
    reinforcement_count: int = 0
    last_accessed_at: datetime | None = None
    valid_to: datetime | None = None
    expires_at: datetime | None = None
    retention: str = "default"
    status: Status = Status.ACTIVE
    superseded_by: str | None = None
    sources: tuple[Source, ...] = ()
    agent_id: str | None = None
    session_id: str | None = None
    blind_index: tuple[str, ...] = ()  # keyed hashes of the identifiers the text names (exact lookup)
    special: tuple[str, ...] = ()  # GDPR special categories the text touches (health, religion…)
    # Stored form only (``SealedIndex``): category, tags, session id and sources sealed together, while
    # ``category`` holds the keyed hash the category filter matches and the others are empty.
    meta: str | None = None
    # A profile record (how to reach and treat the person, :mod:`carnet.domain.profile`): flagged at write
    # time, so ``assemble`` finds the profile by filter.
    profile: bool = False
    # Newer notes that may have made this one untrue: the judge was unsure (its band below ``close_at``)
    # and no LLM settled it. The record stays true; a reader that finds both ranks it after them
    # (:mod:`carnet.domain.contested`).
    contested_by: tuple[str, ...] = ()

    def with_texts(self, text: str, pseudo_text: str) -> Memory:
        """The same record with other texts (sealing and opening). Spelled out rather than
        ``dataclasses.replace``, which is several times slower and runs for every search candidate."""
        return Memory(
            self.id, self.scope, self.kind, text, pseudo_text, self.recorded_at, self.valid_from,
            self.updated_at, self.category, self.tags, self.importance, self.confidence, self.access_count,
            self.reinforcement_count, self.last_accessed_at, self.valid_to, self.expires_at, self.retention,
            self.status, self.superseded_by, self.sources, self.agent_id, self.session_id, self.blind_index,
            self.special, self.meta, self.profile, self.contested_by,
        )

    def with_metadata(self, *, category: str | None, tags: tuple[str, ...], session_id: str | None,
                      sources: tuple[Source, ...], meta: str | None) -> Memory:
        """The same record with other caller metadata (sealing and opening), spelled out like ``with_texts``."""
        return Memory(
            self.id, self.scope, self.kind, self.text, self.pseudo_text, self.recorded_at, self.valid_from,
            self.updated_at, category, tags, self.importance, self.confidence, self.access_count,
            self.reinforcement_count, self.last_accessed_at, self.valid_to, self.expires_at, self.retention,
            self.status, self.superseded_by, sources, self.agent_id, session_id, self.blind_index,
            self.special, meta, self.profile, self.contested_by,
        )

    def reinforced(self, *, at: datetime, sources: tuple[Source, ...]) -> Memory:
        """A duplicate was told again: count it, raise confidence, keep provenance."""
        merged = self.sources + tuple(s for s in sources if s not in self.sources)
        return replace(
            self,
            reinforcement_count=self.reinforcement_count + 1,
            confidence=min(1.0, self.confidence + (1.0 - self.confidence) * 0.3),
            updated_at=at,
            sources=merged,
        )

    def superseded(self, *, by: str, at: datetime) -> Memory:
        """Stop being true at ``at``; kept for history, hidden from recall by default."""
        return replace(self, status=Status.SUPERSEDED, superseded_by=by, valid_to=at, updated_at=at)

    def contested(self, *, by: str) -> Memory:
        """``by`` (a newer note) may have made this one untrue; the newest ``MAX_CONTESTERS`` are kept."""
        if by in self.contested_by:
            return self
        return replace(self, contested_by=(*self.contested_by, by)[-MAX_CONTESTERS:])

    def settled(self, *, by: str | None = None) -> Memory:
        """``by`` (every contester when None) no longer contests this record: an LLM or a person said so."""
        kept = () if by is None else tuple(c for c in self.contested_by if c != by)
        return self if kept == self.contested_by else replace(self, contested_by=kept)

    def is_live(self, now: datetime) -> bool:
        if self.status is not Status.ACTIVE:
            return False
        return self.expires_at is None or self.expires_at > now


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """A change to a record. Metadata only: never the text."""

    memory_id: str
    at: datetime
    action: str  # created, merged, superseded, accessed, updated, deleted
    actor: str
    detail: dict[str, str] = field(default_factory=dict)


_NAMESPACE = uuid.UUID("0b7c4f7e-8a5e-4d59-9c61-5b1f2c3d4e5f")


def point_id(scope: Scope, key: str) -> str:
    """Deterministic record id: the same scope and key always give the same id (idempotent replays)."""
    return str(uuid.uuid5(_NAMESPACE, f"{scope.tenant}\x1f{scope.subject}\x1f{key}"))
