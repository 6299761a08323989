"""The audit chain names every altered, removed, reordered or foreign entry."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from carnet.domain.audit import GENESIS, AuditEntry, AuditEvent, chain_hash, link, verify

T0 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)


def _chain(n: int, tenant: str = "t1") -> list[AuditEntry]:
    entries: list[AuditEntry] = []
    for i in range(n):
        prev = (entries[-1].seq, entries[-1].hash) if entries else None
        event = AuditEvent(tenant=tenant, actor="k1", action="memory.write", at=T0 + timedelta(seconds=i),
                           subject=f"s{i % 3}", targets=(f"m{i}",), detail={"count": 1})
        entries.append(link(prev, event))
    return entries


def _head(entries: list[AuditEntry]) -> tuple[int, str]:
    return entries[-1].seq, entries[-1].hash


def test_intact_chain_verifies() -> None:
    entries = _chain(5)
    assert entries[0].prev_hash == GENESIS and entries[1].prev_hash == entries[0].hash
    verdict = verify("t1", entries, _head(entries))
    assert verdict.ok and verdict.entries == 5


def test_altered_entry_is_named() -> None:
    entries = _chain(5)
    forged = replace(entries[2], event=replace(entries[2].event, actor="someone-else"))
    verdict = verify("t1", [*entries[:2], forged, *entries[3:]], _head(entries))
    assert [(p.seq, p.reason) for p in verdict.problems] == [(3, "altered")]


def test_rehashed_forgery_breaks_the_next_link() -> None:
    entries = _chain(5)
    event = replace(entries[2].event, action="memory.read")
    forged = AuditEntry(3, event, entries[2].prev_hash, chain_hash(entries[2].prev_hash, 3, event))
    verdict = verify("t1", [*entries[:2], forged, *entries[3:]], _head(entries))
    assert [(p.seq, p.reason) for p in verdict.problems] == [(4, "broken_link")]


def test_removed_entry_is_named() -> None:
    entries = _chain(5)
    verdict = verify("t1", [*entries[:1], *entries[2:]], _head(entries))
    assert (2, "missing") in [(p.seq, p.reason) for p in verdict.problems]


def test_removed_tail_shows_against_the_head() -> None:
    entries = _chain(5)
    verdict = verify("t1", entries[:3], _head(entries))
    assert [(p.seq, p.reason) for p in verdict.problems] == [(4, "missing"), (5, "missing")]


def test_reordered_entries_are_named() -> None:
    entries = _chain(5)
    swapped = [entries[0], entries[2], entries[1], *entries[3:]]
    reasons = {(p.seq, p.reason) for p in verify("t1", swapped, _head(entries)).problems}
    assert (3, "broken_link") in reasons and (2, "broken_link") in reasons


def test_entry_of_another_tenant_is_named() -> None:
    entries = _chain(3)
    foreign = _chain(3, tenant="t2")
    verdict = verify("t1", [*entries[:2], foreign[2]], _head(entries))
    assert (3, "wrong_tenant") in {(p.seq, p.reason) for p in verdict.problems}
