"""The ``IntakeStore`` contract, run against SQLite (the reference) and a real PostgreSQL: idempotent
adds, leases in order and one at a time per subject, expired leases taken over, retries when due,
dead letters, and several workers (processes) leasing at once without breaking any of that."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from carnet.adapters.sqlite.intakes import SqliteIntakeStore
from carnet.domain.intake import Intake, IntakeStatus
from carnet.ports import IntakeStore

T0 = datetime(2026, 11, 29, 9, 0, 0, 250000, tzinfo=UTC)

OpenStore = Callable[[], IntakeStore]


@pytest.fixture(params=["sqlite", "postgres"])
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OpenStore]:
    """Opens stores on one queue (several instances = several worker processes sharing it)."""
    opened: list[IntakeStore] = []
    if request.param == "sqlite":
        def make() -> IntakeStore:
            return SqliteIntakeStore(tmp_path / "catalog.sqlite3")
    else:
        from carnet.adapters.postgres.intakes import PostgresIntakeStore
        from tests.support.postgres import open_test_pool

        dsn: str = request.getfixturevalue("postgres_dsn")

        def make() -> IntakeStore:
            return PostgresIntakeStore(open_test_pool(dsn, size=2))

    def opener() -> IntakeStore:
        opened.append(make())
        return opened[-1]

    yield opener
    for s in opened:
        s.close()


@pytest.fixture
def store(open_store: OpenStore) -> IntakeStore:
    return open_store()


def _intake(subject: str, n: int = 0, *, tenant: str = "t1", key: str | None = None, at: datetime = T0) -> Intake:
    return Intake(id=f"{subject}-{n}-{uuid.uuid4().hex[:6]}", tenant=tenant, subject=subject,
                  status=IntakeStatus.PENDING, created_at=at, updated_at=at, session_id="call-1",
                  idempotency_key=key, actor="k1", sealed=b"\x00sealed " + subject.encode())


def test_the_body_fingerprint_is_kept_and_returned_with_the_stored_intake(store: IntakeStore) -> None:
    first = replace(_intake("s1", key="k-hash"), fingerprint="fp-1")
    store.add(first)
    again = store.add(replace(_intake("s1", 1, key="k-hash"), fingerprint="fp-2"))
    assert again.id == first.id and again.fingerprint == "fp-1"  # the service compares, and refuses
    assert store.get("t1", first.id) == replace(first, next_attempt_at=T0)


def _ids(intakes: list[Intake]) -> list[str]:
    return [i.id for i in intakes]


def test_add_get_and_idempotency(store: IntakeStore) -> None:
    first = _intake("s1", key="turn-7")
    assert store.add(first) == first
    stored = store.get("t1", first.id)
    assert stored == replace(first, next_attempt_at=T0)
    assert store.get("t2", first.id) is None and store.get("t1", "unknown") is None
    again = store.add(_intake("s1", 1, key="turn-7"))
    assert again == stored  # the stored one; nothing added
    other_subject = store.add(_intake("s2", key="turn-7"))
    other_tenant = store.add(_intake("s1", key="turn-7", tenant="t2"))
    assert store.get("t1", other_subject.id) is not None and store.get("t2", other_tenant.id) is not None
    assert store.stats().pending == 3


def test_lease_takes_each_subjects_oldest_once(store: IntakeStore) -> None:
    a0, b0, a1, b1 = _intake("a", 0), _intake("b", 0), _intake("a", 1), _intake("b", 1)
    for i in (a0, b0, a1, b1):
        store.add(i)
    leased = store.lease(owner="w1", now=T0, seconds=30, limit=10)
    assert _ids(leased) == [a0.id, b0.id]
    assert leased[0] == replace(store.get("t1", a0.id), sealed=a0.sealed)  # type: ignore[arg-type]
    assert leased[0].status is IntakeStatus.PROCESSING and leased[0].attempts == 1
    assert leased[0].lease_owner == "w1" and leased[0].lease_until == T0 + timedelta(seconds=30)
    assert leased[0].updated_at == T0
    assert store.lease(owner="w2", now=T0 + timedelta(seconds=1), seconds=30, limit=10) == []
    assert store.complete(a0.id, owner="w1", memory_ids=["m1", "m2"], now=T0 + timedelta(seconds=2))
    assert _ids(store.lease(owner="w2", now=T0 + timedelta(seconds=3), seconds=30, limit=10)) == [a1.id]
    done = store.get("t1", a0.id)
    assert done is not None and done.status is IntakeStatus.DONE and done.memory_ids == ("m1", "m2")
    assert done.sealed == b"" and done.lease_owner is None and done.lease_until is None and done.reason is None


def test_limit_and_order_across_subjects(store: IntakeStore) -> None:
    added = [store.add(_intake(f"s{n}", at=T0 + timedelta(seconds=n))) for n in range(5)]
    assert _ids(store.lease(owner="w1", now=T0 + timedelta(minutes=1), seconds=30, limit=2)) == _ids(added[:2])
    assert _ids(store.lease(owner="w2", now=T0 + timedelta(minutes=1), seconds=30)) == _ids(added[2:3])


def test_expired_lease_is_taken_over(store: IntakeStore) -> None:
    i = store.add(_intake("a"))
    store.add(_intake("a", 1))
    store.lease(owner="w1", now=T0, seconds=30)
    assert store.lease(owner="w2", now=T0 + timedelta(seconds=29), seconds=30) == []
    [taken] = store.lease(owner="w2", now=T0 + timedelta(seconds=31), seconds=30)
    assert taken.id == i.id and taken.attempts == 2 and taken.lease_owner == "w2"
    assert store.renew(i.id, owner="w1", until=T0 + timedelta(minutes=5)) is False
    assert store.stage(i.id, owner="w1", sealed=b"late") is False
    assert store.complete(i.id, owner="w1", memory_ids=["x"], now=T0) is False  # the lease was lost
    assert store.fail(i.id, owner="w1", reason="late", now=T0, retry_at=None) is False
    assert store.renew(i.id, owner="w2", until=T0 + timedelta(minutes=5)) is True
    assert store.lease(owner="w3", now=T0 + timedelta(minutes=4), seconds=30) == []
    assert store.stage(i.id, owner="w2", sealed=b"staged extraction") is True
    current = store.get("t1", i.id)
    assert current is not None and current.sealed == b"staged extraction"
    assert current.lease_until == T0 + timedelta(minutes=5)
    assert store.complete(i.id, owner="w2", memory_ids=[], now=T0) is True
    assert store.renew(i.id, owner="w2", until=T0 + timedelta(minutes=9)) is False


def test_retry_waits_for_its_due_time_and_holds_the_subject(store: IntakeStore) -> None:
    first, second = store.add(_intake("a")), store.add(_intake("a", 1))
    store.lease(owner="w1", now=T0, seconds=30)
    retry_at = T0 + timedelta(seconds=60)
    assert store.fail(first.id, owner="w1", reason="extraction_failed", now=T0 + timedelta(seconds=1),
                      retry_at=retry_at)
    failed = store.get("t1", first.id)
    assert failed is not None and failed.status is IntakeStatus.PENDING and failed.reason == "extraction_failed"
    assert failed.next_attempt_at == retry_at and failed.attempts == 1
    assert store.lease(owner="w2", now=T0 + timedelta(seconds=59), seconds=30, limit=5) == []  # nor the second
    [again] = store.lease(owner="w2", now=retry_at, seconds=30)
    assert again.id == first.id and again.attempts == 2 and again.reason == "extraction_failed"
    assert store.stats().processing == 1 and second.status is IntakeStatus.PENDING


def test_an_uncounted_failure_takes_the_leases_attempt_back(store: IntakeStore) -> None:
    """A dependency was down: pending again at its time, and the attempt count as before the lease."""
    first = store.add(_intake("a"))
    store.lease(owner="w1", now=T0, seconds=30)
    store.fail(first.id, owner="w1", reason="extraction_failed", now=T0, retry_at=T0 + timedelta(seconds=1))
    for n in range(3):
        now = T0 + timedelta(seconds=1 + 10 * n)
        [leased] = store.lease(owner="w1", now=now, seconds=30)
        assert leased.attempts == 2  # this lease counted
        assert store.fail(first.id, owner="w1", reason="kms_unavailable", now=now,
                          retry_at=now + timedelta(seconds=10), counted=False)
        back = store.get("t1", first.id)
        assert back is not None and back.status is IntakeStatus.PENDING and back.reason == "kms_unavailable"
        assert back.attempts == 1 and back.next_attempt_at == now + timedelta(seconds=10)
    assert store.fail(first.id, owner="w1", reason="late", now=T0, retry_at=None, counted=False) is False  # not leased


def test_dead_letters_and_retry(store: IntakeStore) -> None:
    a, a1, b = store.add(_intake("a")), store.add(_intake("a", 1, at=T0 + timedelta(seconds=1))), store.add(
        _intake("b", tenant="t2", at=T0 + timedelta(seconds=2)))
    assert _ids(store.lease(owner="w1", now=T0 + timedelta(seconds=2), seconds=30, limit=5)) == [a.id, b.id]
    assert store.fail(a.id, owner="w1", reason="schema", now=T0, retry_at=None)
    assert store.fail(b.id, owner="w1", reason="schema", now=T0, retry_at=None)
    dead = store.get("t1", a.id)
    assert dead is not None and dead.status is IntakeStatus.DEAD and dead.lease_owner is None
    stats = store.stats()
    assert (stats.pending, stats.processing, stats.dead) == (1, 0, 2) and stats.oldest_pending_at == a1.created_at
    mine = store.stats("t1")
    assert (mine.pending, mine.processing, mine.dead) == (1, 0, 1) and store.stats("t3").dead == 0
    [listed] = store.dead("t1")  # a tenant's own dead letters only, without their payload
    assert listed.id == a.id and listed.reason == "schema" and listed.sealed == b""
    assert _ids(store.dead("t2")) == [b.id] and store.dead("t3") == []
    # a dead intake no longer holds the subject
    assert _ids(store.lease(owner="w2", now=T0 + timedelta(seconds=2), seconds=30)) == [a1.id]
    store.complete(a1.id, owner="w2", memory_ids=[], now=T0)
    later = T0 + timedelta(minutes=1)
    assert store.retry_dead(tenant="t2", now=later) == 1
    assert store.retry_dead(intake_id="unknown", now=later) == 0
    assert store.retry_dead(tenant="t1", intake_id=a.id, now=later) == 1
    revived = store.get("t1", a.id)
    assert revived is not None and revived.status is IntakeStatus.PENDING and revived.attempts == 0
    assert revived.next_attempt_at == later and revived.updated_at == later
    assert store.lease(owner="w3", now=T0 + timedelta(seconds=59), seconds=30, limit=5) == []
    assert set(_ids(store.lease(owner="w3", now=later, seconds=30, limit=5))) == {a.id, b.id}
    assert store.stats().dead == 0


def _done(store: IntakeStore, intake: Intake, at: datetime, keep_until: datetime | None) -> None:
    store.add(intake)
    assert _ids(store.lease(owner="w1", now=at, seconds=30)) == [intake.id]
    assert store.complete(intake.id, owner="w1", memory_ids=[], now=at, keep_until=keep_until)


def test_a_sessions_done_intakes_stay_its_context_until_their_time(store: IntakeStore) -> None:
    """Kept sealed until ``context_until`` and found by the session's keyed hash (oldest first, done
    ones only, the subject's and tenant's own); then ``expire_context`` drops them."""
    until = T0 + timedelta(minutes=60)
    first = replace(_intake("a", 0), session_key="sk-1")
    second = replace(_intake("a", 1), session_key="sk-1")
    other_session = replace(_intake("a", 2), session_key="sk-2")
    not_kept = replace(_intake("a", 3), session_key="sk-1")
    for n, i in enumerate((first, second, other_session)):
        _done(store, i, T0 + timedelta(seconds=n), until)
    _done(store, not_kept, T0 + timedelta(seconds=5), None)  # no session context configured: dropped at once
    running = store.add(replace(_intake("a", 4), session_key="sk-1"))
    store.add(replace(_intake("a", 0, tenant="t2"), session_key="sk-1"))  # another tenant's, same hash
    store.add(replace(_intake("b", 0), session_key="sk-1"))  # another subject's
    found = store.session_context("t1", "a", "sk-1", now=T0 + timedelta(seconds=10))
    assert _ids(found) == [first.id, second.id]
    assert [i.sealed for i in found] == [first.sealed, second.sealed]
    assert found[0].context_until == until and found[0].status is IntakeStatus.DONE
    assert store.get("t1", not_kept.id).sealed == b""  # type: ignore[union-attr]
    assert store.get("t1", running.id).session_key == "sk-1"  # type: ignore[union-attr]
    assert store.session_context("t1", "a", "sk-1", now=until) == []  # its time has passed: never read
    assert store.expire_context(until - timedelta(seconds=1)) == 0
    assert store.expire_context(until) == 3
    assert store.expire_context(until) == 0
    gone = store.get("t1", first.id)
    assert gone is not None and gone.sealed == b"" and gone.context_until is None and gone.memory_ids == ()


def test_forget_subject_takes_the_kept_context_too(store: IntakeStore) -> None:
    _done(store, replace(_intake("a", 0), session_key="sk-1"), T0, T0 + timedelta(hours=1))
    assert store.forget_subject("t1", "a") == 1
    assert store.session_context("t1", "a", "sk-1", now=T0) == []


def test_forget_subject(store: IntakeStore) -> None:
    for n in range(3):
        store.add(_intake("a", n))
    keep = store.add(_intake("b"))
    store.lease(owner="w1", now=T0, seconds=30)
    assert store.forget_subject("t1", "a") == 3
    assert store.forget_subject("t1", "a") == 0
    assert store.get("t1", keep.id) is not None and store.stats().pending == 1


def test_an_older_intake_retried_waits_for_the_running_one(store: IntakeStore, request: pytest.FixtureRequest) -> None:
    """A dead intake sent back while a newer one of the subject is processing: one at a time still holds."""
    old, new = store.add(_intake("a")), store.add(_intake("a", 1))
    store.lease(owner="w1", now=T0, seconds=30)
    store.fail(old.id, owner="w1", reason="schema", now=T0, retry_at=None)
    store.lease(owner="w1", now=T0, seconds=300)  # the newer one is running now
    store.retry_dead(intake_id=old.id, now=T0)
    assert store.lease(owner="w2", now=T0 + timedelta(seconds=1), seconds=30) == []
    store.complete(new.id, owner="w1", memory_ids=[], now=T0 + timedelta(seconds=2))
    assert _ids(store.lease(owner="w2", now=T0 + timedelta(seconds=3), seconds=30)) == [old.id]


def test_workers_leasing_at_once_keep_each_subject_in_order_one_at_a_time(open_store: OpenStore) -> None:
    """Six workers, each with its own store (a process of its own for the database), lease with real
    time; now and then one "crashes" holding what it leased (a short lease it abandons), which another
    takes over once it expires. No subject ever has two intakes held at once, and each subject's
    intakes finish in the order they were added."""
    subjects, per_subject = 8, 5
    setup = open_store()
    expected = {f"s{s}": [setup.add(_intake(f"s{s}", n)).id for n in range(per_subject)] for s in range(subjects)}
    held: dict[str, str] = {}
    finished: dict[str, list[str]] = {s: [] for s in expected}
    violations: list[str] = []
    guard = threading.Lock()
    stop = threading.Event()

    def work(n: int) -> None:
        store, rounds = open_store(), 0
        while not stop.is_set():
            rounds += 1
            crash = (n + rounds) % 5 == 0  # this round's leases are abandoned, as by a killed worker
            leased = store.lease(owner=f"w{n}", now=datetime.now(UTC), seconds=0.2 if crash else 60, limit=2)
            for i in leased:
                with guard:
                    if i.subject in held:
                        violations.append(f"{i.id} leased while {held[i.subject]} is held")
                    if expected[i.subject][len(finished[i.subject])] != i.id:
                        violations.append(f"{i.id} out of order")
                    held[i.subject] = i.id
                with guard:
                    del held[i.subject]  # before completing: the next lease may come right after
                    if not crash:
                        finished[i.subject].append(i.id)
                if not crash and not store.complete(i.id, owner=f"w{n}", memory_ids=[], now=datetime.now(UTC)):
                    with guard:
                        violations.append(f"{i.id}: lease lost before it expired")
            if not leased:
                stop.wait(0.01)  # poll interval of an idle worker

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    deadline = datetime.now(UTC) + timedelta(seconds=60)
    while datetime.now(UTC) < deadline and setup.stats().pending + setup.stats().processing:
        stop.wait(0.05)
    stop.set()
    for t in threads:
        t.join(timeout=30)
    assert violations == []
    assert finished == expected
    assert setup.stats().pending == setup.stats().processing == 0
    retried = [i for ids in expected.values() for i in ids if (got := setup.get("t1", i)) and got.attempts > 1]
    assert retried, "no lease was taken over: the crash path did not run"
