"""What the assistants know they wrote, and the invariants every answer is checked against as it
arrives: no memory of another tenant (by id or by the marker its text carries), nothing of an erased
subject, no forgotten memory, no erasure under a legal hold, a replay (same idempotency key) answered
with what the first attempt created.

Every remembered text and every call carries a marker of its own (``mk`` + 12 hex digits), so a
memory is traced to its tenant and subject whichever route shows it.
"""

from __future__ import annotations

import re
import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

MARKER = re.compile(r"\bmk[0-9a-f]{12}\b")
_SAMPLES = 20  # details kept per violation kind


def new_marker() -> str:
    return "mk" + uuid.uuid4().hex[:12]


@dataclass
class Subject:
    tenant: str
    id: str
    memories: set[str] = field(default_factory=set)  # remembered, answered 201
    forgotten: set[str] = field(default_factory=set)
    erased: bool = False
    hashes: set[str] = field(default_factory=set)  # the erasure receipts' subject hashes
    incomplete: bool = False  # a receipt said ``complete: false``
    intakes: list[str] = field(default_factory=list)  # accepted for this subject

    @property
    def live_memories(self) -> set[str]:
        return self.memories - self.forgotten


class Ledger:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.subjects: dict[tuple[str, str], Subject] = {}
        self.owner: dict[str, tuple[str, str]] = {}  # memory id or marker -> (tenant, subject)
        self.intakes: dict[str, tuple[str, str]] = {}  # intake id -> (tenant, subject)
        self.violations: Counter[str] = Counter()
        self.at_erasure: Counter[str] = Counter()  # the intakes' states just before their subject's erasure
        self.samples: dict[str, list[dict[str, Any]]] = {}

    @classmethod
    def of(cls, other: Ledger) -> Ledger:
        """The same subjects and owners, no violations yet: to check the stores again after a remedy."""
        fresh = cls()
        fresh.subjects, fresh.owner, fresh.intakes = other.subjects, other.owner, other.intakes
        return fresh

    def subject(self, tenant: str, subject_id: str) -> Subject:
        with self._lock:
            return self.subjects.setdefault((tenant, subject_id), Subject(tenant, subject_id))

    def live_subjects(self, tenant: str) -> list[Subject]:
        with self._lock:
            return [s for (t, _), s in self.subjects.items() if t == tenant and not s.erased and s.memories]

    def subjects_of(self, tenant: str) -> list[Subject]:
        """Every subject of ``tenant`` the soak has named, erased or not yet written to included."""
        with self._lock:
            return [s for (t, _), s in self.subjects.items() if t == tenant]

    def owns(self, tenant: str, subject_id: str, *names: str) -> None:
        with self._lock:
            for name in names:
                self.owner.setdefault(name, (tenant, subject_id))

    def intake(self, tenant: str, subject_id: str, intake_id: str) -> bool:
        """Record an accepted intake; False if this id was already another subject's."""
        with self._lock:
            return self.intakes.setdefault(intake_id, (tenant, subject_id)) == (tenant, subject_id)

    def seen_at_erasure(self, state: str) -> None:
        with self._lock:
            self.at_erasure[state] += 1

    def violation(self, kind: str, **detail: Any) -> None:
        with self._lock:
            self.violations[kind] += 1
            kept = self.samples.setdefault(kind, [])
            if len(kept) < _SAMPLES:
                kept.append(detail)

    def inspect(self, tenant: str, subject_id: str, route: str, body: Any) -> None:
        """Every memory an answer shows (any ``{"id", "text"}`` in it) belongs to this tenant and
        subject, is not of an erased subject and was not forgotten."""
        for memory_id, text in memories_in(body):
            for name in (memory_id, *MARKER.findall(text)):
                self._check(tenant, subject_id, route, name)

    def _check(self, tenant: str, subject_id: str, route: str, name: str) -> None:
        with self._lock:
            found = self.owner.get(name)
            owner = self.subjects.get(found) if found else None
        if found is None or owner is None:
            return
        if found[0] != tenant:
            self.violation("cross_tenant", route=route, tenant=tenant, subject=subject_id, shown=name,
                           owner=list(found))
        elif found[1] != subject_id:
            self.violation("cross_subject", route=route, subject=subject_id, shown=name, owner=found[1])
        if owner.erased:
            self.violation("erased_reappeared", route=route, subject=found[1], shown=name)
        elif name in owner.forgotten:
            self.violation("forgotten_reappeared", route=route, subject=found[1], shown=name)


def memories_in(body: Any) -> Iterator[tuple[str, str]]:
    """``(id, text)`` of every memory-like object anywhere in a JSON answer."""
    if isinstance(body, dict):
        if isinstance(body.get("id"), str) and isinstance(body.get("text"), str):
            yield body["id"], body["text"]
        for value in body.values():
            yield from memories_in(value)
    elif isinstance(body, list):
        for value in body:
            yield from memories_in(value)
