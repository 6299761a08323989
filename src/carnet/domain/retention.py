"""Retention and forgetting, as rules: which of a subject's records must go, and why. Pure, no I/O.

Four reasons, checked in this order (a record is reported under the first that applies):

- ``retention``: its ``expires_at`` (set at write time from its class, its special categories and
  its date) has passed. The stored date is the one reads already honour, so what maintenance deletes
  is exactly what recall has stopped showing; changing a class's days applies to records written
  afterwards.
- ``relationship_end``: its class counts from the end of the subject's relationship (AML records:
  five years after the account is closed), the tenant has recorded that end, and the days have run
  out. While the relationship is open such a record never expires this way.
- ``decay``: unimportant (``importance`` below the threshold) and untouched for the configured days:
  not read by a search, not told again, not changed (the latest of ``last_accessed_at`` and
  ``updated_at``, which is at least ``recorded_at``).
- ``superseded_orphan``: a superseded record whose successor is gone (deleted by any rule above in
  the same pass, or forgotten earlier). A superseded record is the history of a fact; once the fact
  that replaced it has gone, keeping the older, less true version would let it outlive the newer one.
  Chains (A superseded by B superseded by C) are followed to the end in one pass.

A subject under legal hold loses nothing to any of these.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum

from carnet.domain.reconcile.values import later
from carnet.domain.records import Memory, RetentionClass, RetentionStart, Status

ALL_TENANTS = "*"
DEFAULT_CLASS = "default"


class Reason(StrEnum):
    RETENTION = "retention"
    RELATIONSHIP_END = "relationship_end"
    DECAY = "decay"
    SUPERSEDED_ORPHAN = "superseded_orphan"


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    """Retention classes per tenant (``"*"``: every tenant without its own entry), plus the
    ``default`` class every tenant has unless it defines its own."""

    tenants: Mapping[str, Mapping[str, RetentionClass]] = field(default_factory=dict)
    default: RetentionClass = field(default_factory=lambda: RetentionClass(DEFAULT_CLASS, None))

    def classes(self, tenant: str) -> Mapping[str, RetentionClass]:
        own = self.tenants.get(tenant)
        if own is None:
            own = self.tenants.get(ALL_TENANTS, {})
        return own if DEFAULT_CLASS in own else {DEFAULT_CLASS: self.default, **own}

    def lookup(self, tenant: str, name: str) -> RetentionClass | None:
        return self.classes(tenant).get(name)


@dataclass(frozen=True, slots=True)
class SubjectRetention:
    """What the tenant has recorded about one subject: a legal hold, the end of the relationship."""

    legal_hold: bool = False
    hold_since: datetime | None = None
    hold_reference: str | None = None  # a case or matter reference, never personal data
    relationship_end: datetime | None = None

    def as_dict(self) -> dict[str, object]:
        return {
            "legal_hold": self.legal_hold,
            "hold_since": None if self.hold_since is None else self.hold_since.isoformat(),
            "hold_reference": self.hold_reference,
            "relationship_end": None if self.relationship_end is None else self.relationship_end.isoformat(),
        }


@dataclass(frozen=True, slots=True)
class DecayRule:
    enabled: bool = True
    importance_below: float = 0.1
    untouched_days: int = 120

    def decayed(self, m: Memory, now: datetime) -> bool:
        if not self.enabled or m.importance >= self.importance_below:
            return False
        touched = max(m.updated_at, m.recorded_at, m.last_accessed_at or m.recorded_at)
        return touched <= now - timedelta(days=self.untouched_days)


def doomed(records: Sequence[Memory], *, now: datetime, classes: Mapping[str, RetentionClass],
           subject: SubjectRetention, decay: DecayRule) -> dict[str, Reason]:
    """``{record id: reason}`` for every record of one subject that must be deleted now."""
    if subject.legal_hold:
        return {}
    out: dict[str, Reason] = {}
    for m in records:
        reason = _reason(m, now, classes.get(m.retention), subject, decay)
        if reason is not None:
            out[m.id] = reason
    return out | _orphans(records, out)


def _reason(m: Memory, now: datetime, cls: RetentionClass | None, subject: SubjectRetention,
            decay: DecayRule) -> Reason | None:
    if m.expires_at is not None and m.expires_at <= now:
        return Reason.RETENTION
    if (cls is not None and cls.after is RetentionStart.RELATIONSHIP_END and cls.days is not None
            and subject.relationship_end is not None
            and later(subject.relationship_end, cls.days) <= now):
        return Reason.RELATIONSHIP_END
    if decay.decayed(m, now):
        return Reason.DECAY
    return None


def _orphans(records: Sequence[Memory], gone: Mapping[str, Reason]) -> dict[str, Reason]:
    """Superseded records whose successor is not among the records kept, to a fixed point."""
    kept = {m.id for m in records if m.id not in gone}
    superseded = [m for m in records if m.id in kept and m.status is Status.SUPERSEDED]
    out: dict[str, Reason] = {}
    changed = True
    while changed:
        changed = False
        for m in superseded:
            if m.id in kept and m.superseded_by is not None and m.superseded_by not in kept:
                kept.discard(m.id)
                out[m.id] = Reason.SUPERSEDED_ORPHAN
                changed = True
    return out
