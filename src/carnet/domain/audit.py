"""The audit trail's entries and their hash chain (pure: no storage, no clock).

Each tenant has its own chain. An entry's hash covers its sequence number, its fields and the
previous entry's hash, so altering an entry breaks its own hash, removing one leaves a gap in the
sequence, and reordering breaks the links. Entries carry no personal data: the subject is its keyed
hash (the same one the vector store uses), the actor a key id or a command name, and the detail only
counts, field names and memory ids (random UUIDs).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

GENESIS = "0" * 64

DetailValue = str | int | float | bool | None


@dataclass(frozen=True, slots=True)
class AuditEvent:
    """Who did what, when, to which subject (by keyed hash) and which records."""

    tenant: str
    actor: str  # an API key id, or "cli:<command>"
    action: str  # e.g. memory.write, memory.read, subject.export, subject.erase, apikey.revoke
    at: datetime
    subject: str | None = None  # keyed hash, never the subject id
    targets: tuple[str, ...] = ()  # memory ids
    outcome: str = "ok"
    detail: Mapping[str, DetailValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AuditEntry:
    seq: int
    event: AuditEvent
    prev_hash: str
    hash: str

    def as_dict(self) -> dict[str, object]:
        e = self.event
        return {
            "tenant": e.tenant, "seq": self.seq, "at": e.at.isoformat(), "actor": e.actor, "action": e.action,
            "subject": e.subject, "targets": list(e.targets), "outcome": e.outcome, "detail": dict(e.detail),
            "prev_hash": self.prev_hash, "hash": self.hash,
        }


def canonical(seq: int, event: AuditEvent) -> bytes:
    """The bytes an entry's hash covers: stable key order, no whitespace, UTC ISO timestamps."""
    doc = {
        "seq": seq, "tenant": event.tenant, "at": event.at.astimezone(UTC).isoformat(), "actor": event.actor,
        "action": event.action, "subject": event.subject, "targets": list(event.targets),
        "outcome": event.outcome, "detail": dict(event.detail),
    }
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def chain_hash(prev_hash: str, seq: int, event: AuditEvent) -> str:
    return hashlib.sha256(prev_hash.encode() + b"\n" + canonical(seq, event)).hexdigest()


def link(prev: tuple[int, str] | None, event: AuditEvent) -> AuditEntry:
    """The entry that follows ``prev`` (its seq and hash; None for a tenant's first entry)."""
    seq, prev_hash = (prev[0] + 1, prev[1]) if prev else (1, GENESIS)
    return AuditEntry(seq, event, prev_hash, chain_hash(prev_hash, seq, event))


@dataclass(frozen=True, slots=True)
class Problem:
    seq: int
    reason: str  # altered, missing, broken_link, not_in_head, wrong_tenant

    def as_dict(self) -> dict[str, object]:
        return {"seq": self.seq, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Verdict:
    tenant: str
    entries: int
    problems: tuple[Problem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict[str, object]:
        return {"tenant": self.tenant, "entries": self.entries, "ok": self.ok,
                "problems": [p.as_dict() for p in self.problems]}


def verify(tenant: str, entries: Iterable[AuditEntry], head: tuple[int, str] | None) -> Verdict:
    """Walk the chain in stored order and name every entry that does not hold.

    ``head`` is the last (seq, hash) the log recorded apart from the entries: a removed tail shows
    as a head the entries never reach."""
    problems: list[Problem] = []
    expected_seq, prev_hash, count = 1, GENESIS, 0
    for entry in entries:
        count += 1
        if entry.event.tenant != tenant:
            problems.append(Problem(entry.seq, "wrong_tenant"))
        if entry.seq != expected_seq:
            problems.extend(Problem(s, "missing") for s in range(expected_seq, entry.seq))
        if entry.prev_hash != prev_hash:
            problems.append(Problem(entry.seq, "broken_link"))
        if chain_hash(entry.prev_hash, entry.seq, entry.event) != entry.hash:
            problems.append(Problem(entry.seq, "altered"))
        expected_seq, prev_hash = entry.seq + 1, entry.hash
    if head is not None:
        last = expected_seq - 1
        if head[0] > last:
            problems.extend(Problem(s, "missing") for s in range(expected_seq, head[0] + 1))
        elif head[0] < last:  # rows appended behind the log's back
            problems.extend(Problem(s, "not_in_head") for s in range(head[0] + 1, expected_seq))
        elif head[1] != prev_hash:
            problems.append(Problem(last, "altered"))
    return Verdict(tenant, count, tuple(problems))


def in_pages(read_after: Callable[[int], list[AuditEntry]], after_seq: int) -> Iterator[AuditEntry]:
    """Every entry after ``after_seq``, one page at a time (``read_after(seq)``: the next page, empty at
    the end): a store never holds the whole trail in memory."""
    last = after_seq
    while page := read_after(last):
        yield from page
        last = page[-1].seq
