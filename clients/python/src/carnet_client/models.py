"""What the endpoints answer, as frozen dataclasses, each read from its JSON by ``from_json``.

Enumerations the server may grow (kinds, statuses, actions, score signals, stats) are plain ``str``
and mappings, so a newer server never breaks an older client. Timestamps are aware ``datetime``s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar

T = TypeVar("T")
Json = Mapping[str, Any]


def _at(value: Any) -> datetime:
    return datetime.fromisoformat(value)


def _at_or_none(value: Any) -> datetime | None:
    return datetime.fromisoformat(value) if value is not None else None


@dataclass(frozen=True, slots=True)
class Source:
    """Provenance of a record: ``kind`` is ``api``, ``turn`` or ``intake``."""

    kind: str
    ref: str
    session_id: str | None = None


@dataclass(frozen=True, slots=True)
class Memory:
    id: str
    kind: str
    text: str
    status: str
    category: str | None
    tags: tuple[str, ...]
    importance: float
    confidence: float
    access_count: int
    reinforcement_count: int
    valid_from: datetime
    valid_to: datetime | None
    recorded_at: datetime
    updated_at: datetime
    last_accessed_at: datetime | None
    expires_at: datetime | None
    retention: str | None
    superseded_by: str | None
    sources: tuple[Source, ...]
    session_id: str | None
    agent_id: str | None
    special_categories: tuple[str, ...]

    @property
    def occurred_at(self) -> datetime:
        """When the fact became true: the ``occurred_at`` it was remembered with (``valid_from``)."""
        return self.valid_from

    @classmethod
    def from_json(cls, d: Json) -> Memory:
        return cls(
            id=d["id"], kind=d["kind"], text=d["text"], status=d["status"], category=d.get("category"),
            tags=tuple(d.get("tags") or ()), importance=d["importance"], confidence=d["confidence"],
            access_count=d["access_count"], reinforcement_count=d["reinforcement_count"],
            valid_from=_at(d["valid_from"]), valid_to=_at_or_none(d.get("valid_to")),
            recorded_at=_at(d["recorded_at"]), updated_at=_at(d["updated_at"]),
            last_accessed_at=_at_or_none(d.get("last_accessed_at")), expires_at=_at_or_none(d.get("expires_at")),
            retention=d.get("retention"), superseded_by=d.get("superseded_by"),
            sources=tuple(Source(s["kind"], s["ref"], s.get("session_id")) for s in d.get("sources") or ()),
            session_id=d.get("session_id"), agent_id=d.get("agent_id"),
            special_categories=tuple(d.get("special_categories") or ()),
        )


@dataclass(frozen=True, slots=True)
class Ranked:
    """A search hit: ``signals`` holds the parts of the score (cosine, relevance, keyword, recency…)."""

    memory: Memory
    score: float
    signals: Mapping[str, float]

    @classmethod
    def from_json(cls, d: Json) -> Ranked:
        return cls(Memory.from_json(d["memory"]), d["score"], dict(d["signals"]))


@dataclass(frozen=True, slots=True)
class Outcome:
    """What reconcile did with one remembered text: ``action`` is ``created``, ``merged``,
    ``superseded`` or ``unchanged``; ``memory`` is the record that now holds it."""

    action: str
    memory: Memory
    merged_into: str | None
    superseded: tuple[str, ...]
    rule: str | None

    @classmethod
    def from_json(cls, d: Json) -> Outcome:
        return cls(d["action"], Memory.from_json(d["memory"]), d.get("merged_into"),
                   tuple(d.get("superseded") or ()), d.get("rule"))


@dataclass(frozen=True, slots=True)
class RememberResult:
    """A batch's outcomes, in the order of the batch, and the ids they touched."""

    results: tuple[Outcome, ...]
    created: tuple[str, ...]
    merged: tuple[str, ...]
    superseded: tuple[str, ...]

    @classmethod
    def from_json(cls, d: Json) -> RememberResult:
        return cls(tuple(Outcome.from_json(o) for o in d["results"]), tuple(d["created"]), tuple(d["merged"]),
                   tuple(d["superseded"]))


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page of a listing; pass ``next_cursor`` back for the next one (None: this was the last).
    ``unreadable``: records of this page the server left out because they cannot be read (a damaged
    record; the others are all here)."""

    items: tuple[T, ...]
    next_cursor: str | None
    unreadable: int = 0


@dataclass(frozen=True, slots=True)
class ProfileItem:
    """A fact of the profile tier and its kinds (contact, accessibility, vulnerability, consent)."""

    memory: Memory
    kinds: tuple[str, ...]

    @classmethod
    def from_json(cls, d: Json) -> ProfileItem:
        return cls(Memory.from_json(d["memory"]), tuple(d.get("kinds") or ()))


@dataclass(frozen=True, slots=True)
class Procedure:
    """A team procedure: ``status`` is proposed, approved, rejected or retired; ``proposed_by`` a key
    id or ``"extraction"``; ``decided_by`` the supervisor key that decided last."""

    id: str
    text: str
    status: str
    agent_id: str | None
    queue: str | None
    applies_when: tuple[str, ...]
    proposed_by: str
    decided_by: str | None
    created_at: datetime
    updated_at: datetime

    @classmethod
    def from_json(cls, d: Json) -> Procedure:
        return cls(d["id"], d["text"], d["status"], d.get("agent_id"), d.get("queue"),
                   tuple(d.get("applies_when") or ()), d["proposed_by"], d.get("decided_by"), _at(d["created_at"]),
                   _at(d["updated_at"]))


@dataclass(frozen=True, slots=True)
class ProcedureConflict:
    channel: str  # sms, email, phone, post
    constraint: str  # the member's fact refusing it


@dataclass(frozen=True, slots=True)
class TeamProcedure:
    """An approved team procedure in a context; ``conflict`` when the member's constraints refuse
    a channel it prescribes (``conflicts`` says which)."""

    id: str
    text: str
    score: float
    conflict: bool
    conflicts: tuple[ProcedureConflict, ...] = ()
    agent_id: str | None = None
    queue: str | None = None

    @classmethod
    def from_json(cls, d: Json) -> TeamProcedure:
        return cls(d["id"], d["text"], float(d["score"]), bool(d["conflict"]),
                   tuple(ProcedureConflict(c["channel"], c["constraint"]) for c in d.get("conflicts") or ()),
                   d.get("agent_id"), d.get("queue"))


@dataclass(frozen=True, slots=True)
class Context:
    """What to put in the prompt: the ranked tiers, the rendered ``prompt`` and ``stats``
    (count, top_score, mean_score, tokens, profile_count, profile_tokens, team_procedures,
    team_conflicts, latency_ms), the ``profile`` tier: the subject's current facts on how to reach and
    treat them, whatever the query, and the team's approved procedures the query calls for (both
    empty from a server without them)."""

    memories: tuple[Ranked, ...]
    episodes: tuple[Ranked, ...]
    procedures: tuple[Ranked, ...]
    prompt: str
    stats: Mapping[str, float]
    profile: tuple[ProfileItem, ...] = ()
    team_procedures: tuple[TeamProcedure, ...] = ()

    @classmethod
    def from_json(cls, d: Json) -> Context:
        def tier(name: str) -> tuple[Ranked, ...]:
            return tuple(Ranked.from_json(r) for r in d[name])

        return cls(tier("memories"), tier("episodes"), tier("procedures"), d["prompt"], dict(d["stats"]),
                   tuple(ProfileItem.from_json(p) for p in d.get("profile") or ()),
                   tuple(TeamProcedure.from_json(t) for t in d.get("team_procedures") or ()))


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """A change to a record (metadata only, never its text)."""

    at: datetime
    action: str
    actor: str
    detail: Mapping[str, Any]

    @classmethod
    def from_json(cls, d: Json) -> HistoryEntry:
        return cls(_at(d["at"]), d["action"], d["actor"], dict(d.get("detail") or {}))


@dataclass(frozen=True, slots=True)
class ExportRecord:
    memory: Memory
    history: tuple[HistoryEntry, ...]

    @classmethod
    def from_json(cls, d: Json) -> ExportRecord:
        return cls(Memory.from_json(d["memory"]), tuple(HistoryEntry.from_json(h) for h in d["history"]))


@dataclass(frozen=True, slots=True)
class Export:
    """Everything held on a subject (GDPR art. 15/20), decrypted, of every kind and status."""

    format: str
    subject_id: str
    exported_at: datetime
    count: int
    records: tuple[ExportRecord, ...]

    @classmethod
    def from_json(cls, d: Json) -> Export:
        return cls(d["format"], d["subject_id"], _at(d["exported_at"]), d["count"],
                   tuple(ExportRecord.from_json(r) for r in d["records"]))


@dataclass(frozen=True, slots=True)
class ErasureReceipt:
    """Proof of an erasure (GDPR art. 17). It names the subject by its keyed hash only; ``verified``
    says what was checked afterwards, ``complete`` that every check held."""

    tenant: str
    subject_hash: str
    at: datetime
    records_deleted: int
    catalog_rows_deleted: int
    data_key_destroyed: bool
    verified: Mapping[str, bool]
    complete: bool

    @classmethod
    def from_json(cls, d: Json) -> ErasureReceipt:
        return cls(d["tenant"], d["subject_hash"], _at(d["at"]), d["records_deleted"], d["catalog_rows_deleted"],
                   d["data_key_destroyed"], dict(d["verified"]), d["complete"])


@dataclass(frozen=True, slots=True)
class IntakeState:
    """An intake: ``pending``, ``processing``, ``done`` (``memory_ids``) or ``dead`` (``reason``)."""

    intake_id: str
    status: str
    reason: str | None = None
    memory_ids: tuple[str, ...] = ()
    attempts: int = 0
    session_id: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None

    @property
    def finished(self) -> bool:
        return self.status in ("done", "dead")

    @classmethod
    def from_json(cls, d: Json) -> IntakeState:
        return cls(d["intake_id"], d["status"], d.get("reason"), tuple(d.get("memory_ids") or ()),
                   d.get("attempts", 0), d.get("session_id"), _at_or_none(d.get("created_at")),
                   _at_or_none(d.get("updated_at")))


@dataclass(frozen=True, slots=True)
class Retention:
    """A subject's legal hold and end of relationship (what limits retention and erasure)."""

    legal_hold: bool
    hold_since: datetime | None
    hold_reference: str | None
    relationship_end: datetime | None

    @classmethod
    def from_json(cls, d: Json) -> Retention:
        return cls(d["legal_hold"], _at_or_none(d.get("hold_since")), d.get("hold_reference"),
                   _at_or_none(d.get("relationship_end")))


@dataclass(frozen=True, slots=True)
class MaintenanceReport:
    """What a maintenance pass deleted (or would delete, in a dry run), by reason: counts only."""

    dry_run: bool
    deleted: Mapping[str, int]
    tenants: Mapping[str, Mapping[str, Any]]
    started_at: datetime
    finished_at: datetime | None

    @classmethod
    def from_json(cls, d: Json) -> MaintenanceReport:
        return cls(d["dry_run"], dict(d["deleted"]), dict(d["tenants"]), _at(d["started_at"]),
                   _at_or_none(d.get("finished_at")))


@dataclass(frozen=True, slots=True)
class ApiKey:
    key_id: str
    tenant: str
    roles: tuple[str, ...]
    created_at: datetime
    revoked: bool
    rate_limit: str | None
    name: str | None

    @classmethod
    def from_json(cls, d: Json) -> ApiKey:
        return cls(d["key_id"], d["tenant"], tuple(d["roles"]), _at(d["created_at"]), d["revoked"],
                   d.get("rate_limit"), d.get("name"))


@dataclass(frozen=True, slots=True)
class NewApiKey:
    """A key just created. ``key`` is shown this once (kept out of ``repr``): store it now."""

    info: ApiKey
    key: str = field(repr=False)

    @classmethod
    def from_json(cls, d: Json) -> NewApiKey:
        return cls(ApiKey.from_json(d), d["key"])


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One link of the tenant's hash chain; ``subject`` is a keyed hash, never a subject id."""

    tenant: str
    seq: int
    at: datetime
    actor: str
    action: str
    subject: str | None
    targets: tuple[str, ...]
    outcome: str
    detail: Mapping[str, Any]
    prev_hash: str
    hash: str

    @classmethod
    def from_json(cls, d: Json) -> AuditEntry:
        return cls(d["tenant"], d["seq"], _at(d["at"]), d["actor"], d["action"], d.get("subject"),
                   tuple(d.get("targets") or ()), d["outcome"], dict(d.get("detail") or {}), d["prev_hash"],
                   d["hash"])


@dataclass(frozen=True, slots=True)
class AuditProblem:
    """An entry that does not hold: ``reason`` is ``altered``, ``missing``, ``broken_link``…"""

    seq: int
    reason: str


@dataclass(frozen=True, slots=True)
class AuditVerdict:
    tenant: str
    entries: int
    ok: bool
    problems: tuple[AuditProblem, ...]

    @classmethod
    def from_json(cls, d: Json) -> AuditVerdict:
        return cls(d["tenant"], d["entries"], d["ok"],
                   tuple(AuditProblem(p["seq"], p["reason"]) for p in d["problems"]))


@dataclass(frozen=True, slots=True)
class Readiness:
    """``checks`` names each dependency with ``ok`` or the error code it failed with."""

    ready: bool
    checks: Mapping[str, str]

    @classmethod
    def from_json(cls, d: Json) -> Readiness:
        return cls(d["status"] == "ready", dict(d["checks"]))
