"""The ``AuditLog`` contract, run against SQLite (the reference) and a real PostgreSQL: chains linked
per tenant, all-or-nothing appends, paging, and several writers (processes) never forking a chain."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from carnet.adapters.sqlite.audit import SqliteAuditLog
from carnet.domain.audit import GENESIS, AuditEvent, verify
from carnet.ports import AuditLog

AT = datetime(2026, 3, 1, 9, 30, 15, 123456, tzinfo=UTC)

OpenLog = Callable[[], AuditLog]


@pytest.fixture(params=["sqlite", "postgres"])
def open_log(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OpenLog]:
    """Opens logs on one store (several instances = several processes appending to it)."""
    opened: list[AuditLog] = []
    if request.param == "sqlite":
        def make() -> AuditLog:
            return SqliteAuditLog(tmp_path / "audit.sqlite3")
    else:
        from carnet.adapters.postgres.audit import PostgresAuditLog
        from tests.support.postgres import open_test_pool

        dsn: str = request.getfixturevalue("postgres_dsn")

        def make() -> AuditLog:
            return PostgresAuditLog(open_test_pool(dsn))

    def opener() -> AuditLog:
        opened.append(make())
        return opened[-1]

    yield opener
    for log in opened:
        log.close()


@pytest.fixture
def log(open_log: OpenLog) -> AuditLog:
    return open_log()


def _event(tenant: str, n: int, **extra: object) -> AuditEvent:
    return AuditEvent(tenant=tenant, actor="k1", action="memory.write", at=AT + timedelta(seconds=n),
                      subject=f"h{n}", targets=(f"m{n}",), detail={"count": n, "ok": True, "ratio": 0.5}, **extra)  # type: ignore[arg-type]


def test_append_links_each_tenant_chain(log: AuditLog) -> None:
    assert log.head("t1") is None and log.tenants() == []
    first = log.append([_event("t1", 1), _event("t2", 1), _event("t1", 2)])
    assert [(e.event.tenant, e.seq) for e in first] == [("t1", 1), ("t2", 1), ("t1", 2)]
    assert first[0].prev_hash == GENESIS and first[2].prev_hash == first[0].hash
    assert log.append([]) == []
    more = log.append([_event("t1", 3)])
    assert more[0].seq == 3 and more[0].prev_hash == first[2].hash
    assert log.head("t1") == (3, more[0].hash) and log.head("t2") == (1, first[1].hash)
    stored = list(log.entries("t1"))
    assert stored == [first[0], first[2], more[0]]
    assert verify("t1", stored, log.head("t1")).ok and verify("t2", log.entries("t2"), log.head("t2")).ok
    assert log.tenants() == ["t1", "t2"]


def test_entries_page_and_resume(log: AuditLog) -> None:
    log.append([_event("t1", n) for n in range(7)])
    assert [e.seq for e in log.entries("t1", page=2)] == list(range(1, 8))
    assert [e.seq for e in log.entries("t1", after_seq=5, page=1)] == [6, 7]
    assert list(log.entries("nobody")) == []


def test_times_come_back_in_utc_and_still_verify(log: AuditLog) -> None:
    paris = timezone(timedelta(hours=2))
    log.append([AuditEvent(tenant="t1", actor="cli:keys", action="keys.rotate", at=AT.astimezone(paris),
                           detail={"note": "é\u0000"})])
    [entry] = list(log.entries("t1"))
    assert entry.event.at == AT and entry.event.at.utcoffset() == timedelta(0)
    assert entry.event.detail == {"note": "é\u0000"} and entry.event.subject is None and entry.event.targets == ()
    assert verify("t1", [entry], log.head("t1")).ok


def test_append_is_all_or_nothing(log: AuditLog) -> None:
    log.append([_event("t1", 1)])
    before = log.head("t1")
    with pytest.raises(TypeError):
        log.append([_event("t1", 2), _event("t2", 1, detail={"bad": object()})])
    assert log.head("t1") == before and log.head("t2") is None
    assert [e.seq for e in log.entries("t1")] == [1] and list(log.entries("t2")) == []


def test_concurrent_appenders_never_fork_a_chain(open_log: OpenLog) -> None:
    """Three instances (processes) x two threads each append batches spanning two tenants at once."""
    logs = [open_log() for _ in range(3)]

    def write(log: AuditLog, worker: int) -> None:
        for i in range(20):
            batch = [_event("t1", i), _event("t2", i)] if i % 2 else [_event("t2", i), _event("t1", i)]
            log.append(batch[: 1 + (worker + i) % 2])

    threads = [threading.Thread(target=write, args=(logs[n % 3], n)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    for tenant in ("t1", "t2"):
        entries = list(logs[0].entries(tenant))
        verdict = verify(tenant, entries, logs[0].head(tenant))
        assert verdict.ok, verdict.as_dict()
        assert [e.seq for e in entries] == list(range(1, len(entries) + 1))
    assert len(list(logs[1].entries("t1"))) + len(list(logs[2].entries("t2"))) == 6 * 20 * 3 // 2


def test_check(log: AuditLog) -> None:
    log.check()
