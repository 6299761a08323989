"""The PostgreSQL ``SubjectLock`` against a real server: two lock objects on two pools stand for two
processes (each has its own sessions, as separate processes do)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import psycopg
import pytest

from carnet.adapters.postgres.locks import KEY_SPACE, PostgresSubjectLocks, lock_key
from carnet.domain.records import Scope
from carnet.errors import SubjectBusy, SubjectLockLost, UnlockedWrite
from tests.support.postgres import open_test_pool

A = Scope("assur-nord", "a" * 64)
B = Scope("assur-nord", "b" * 64)


@pytest.fixture
def two(postgres_dsn: str) -> Iterator[tuple[PostgresSubjectLocks, PostgresSubjectLocks]]:
    first = PostgresSubjectLocks(open_test_pool(postgres_dsn, size=2), timeout=0.3)
    second = PostgresSubjectLocks(open_test_pool(postgres_dsn, size=2), timeout=0.3)
    try:
        yield first, second
    finally:
        first.close()
        second.close()


def _held_keys(dsn: str) -> set[int]:
    with psycopg.connect(dsn, autocommit=True) as db:
        rows = db.execute("SELECT objid FROM pg_locks WHERE locktype = 'advisory' AND classid = %s AND granted",
                          (KEY_SPACE,)).fetchall()
    return {int(r[0]) for r in rows}


def _busy(locks: PostgresSubjectLocks, scope: Scope) -> bool:
    """Whether taking ``scope`` from another thread times out (a thread has no re-entrancy of ours)."""
    out: list[bool] = []

    def attempt() -> None:
        try:
            with locks.for_scope(scope):
                out.append(False)
        except SubjectBusy:
            out.append(True)

    t = threading.Thread(target=attempt)
    t.start()
    t.join(10)
    return out == [True]


def test_the_key_is_stable_and_not_pythons_salted_hash() -> None:
    assert lock_key(A) == lock_key(Scope("assur-nord", "a" * 64))
    assert lock_key(A) == -1232302039  # the same in every process and Python version (BLAKE2b, not hash())
    assert lock_key(A) != lock_key(B) and lock_key(A) != lock_key(Scope("other", "a" * 64))
    assert -(2**31) <= lock_key(B) < 2**31


def test_one_process_holding_a_subject_excludes_the_other(two: tuple[PostgresSubjectLocks, PostgresSubjectLocks],
                                                          postgres_dsn: str) -> None:
    first, second = two
    with first.for_scope(A):
        assert lock_key(A) & 0xFFFFFFFF in _held_keys(postgres_dsn)
        assert _busy(second, A)
        with second.for_scope(B):  # another subject is not held up
            pass
    with second.for_scope(A):  # released: the other process takes it at once
        assert _busy(first, A)
    assert _held_keys(postgres_dsn) == set()


def test_a_waiter_gets_the_lock_when_it_is_released(postgres_dsn: str) -> None:
    first = PostgresSubjectLocks(open_test_pool(postgres_dsn, size=2), timeout=10)
    second = PostgresSubjectLocks(open_test_pool(postgres_dsn, size=2), timeout=10)
    order: list[str] = []
    try:
        with first.for_scope(A):
            def wait_then_note() -> None:
                with second.for_scope(A):
                    order.append("second")

            waiter = threading.Thread(target=wait_then_note)
            waiter.start()
            deadline = time.monotonic() + 5
            while not _waiting(postgres_dsn) and time.monotonic() < deadline:
                time.sleep(0.02)
            assert _waiting(postgres_dsn), "the second process never queued for the lock"
            order.append("first")
        waiter.join(10)
        assert order == ["first", "second"]
    finally:
        first.close()
        second.close()


def _waiting(dsn: str) -> bool:
    with psycopg.connect(dsn, autocommit=True) as db:
        row = db.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = %s"
                         " AND NOT granted", (KEY_SPACE,)).fetchone()
    return row is not None and int(row[0]) > 0


def test_reentrant_in_one_thread_released_by_the_outermost_exit(
        two: tuple[PostgresSubjectLocks, PostgresSubjectLocks]) -> None:
    first, second = two
    with first.for_scope(A):
        with first.for_scope(A):  # the worker's lock around remember, which takes it again
            assert _busy(second, A)
        assert _busy(second, A)  # the inner exit did not unlock
        assert _busy(first, A)  # another thread of the same process waits too
    with second.for_scope(A):
        pass


def test_timeout_is_a_typed_error_and_gives_the_connection_back(
        two: tuple[PostgresSubjectLocks, PostgresSubjectLocks]) -> None:
    first, second = two
    with first.for_scope(A):
        for _ in range(5):  # more attempts than the pool has connections: none is kept
            with pytest.raises(SubjectBusy) as caught, second.for_scope(A):
                pytest.fail("entered a subject another process holds")
            assert caught.value.code == "subject_busy" and caught.value.status == 503
            assert caught.value.context["retry_after"] >= 1
    with second.for_scope(A), second.for_scope(B):  # both connections of its pool are free again
        pass


def test_released_on_exception(two: tuple[PostgresSubjectLocks, PostgresSubjectLocks], postgres_dsn: str) -> None:
    first, second = two
    for _ in range(3):
        with pytest.raises(RuntimeError), first.for_scope(A), first.for_scope(A):
            raise RuntimeError("a failed erasure step")
    assert _held_keys(postgres_dsn) == set()
    with second.for_scope(A), first.for_scope(B), first.for_scope(Scope("t", "c" * 64)):
        pass  # first's two connections are back in its pool


def test_a_dropped_session_releases_the_lock_and_is_never_reused(
        two: tuple[PostgresSubjectLocks, PostgresSubjectLocks], postgres_dsn: str) -> None:
    first, second = two
    with first.for_scope(A):
        with psycopg.connect(postgres_dsn, autocommit=True) as admin:  # the network drops first's session
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory'"
                          " AND classid = %s AND granted", (KEY_SPACE,))
        with second.for_scope(A):  # PostgreSQL released it with the session
            pass
    assert first.lost == 1
    with first.for_scope(A), first.for_scope(B):  # the pool replaced the dead session
        pass


def test_check_held_sees_the_lock_and_a_session_that_ended_under_the_write(
        two: tuple[PostgresSubjectLocks, PostgresSubjectLocks], postgres_dsn: str) -> None:
    """What the key ring asks before it creates a data key: held by this thread, in a live session.
    Once PostgreSQL ended the session (a restart), the write learns it there, before it creates a key
    that an erasure run meanwhile by another process would not know of."""
    first, second = two
    with pytest.raises(UnlockedWrite):
        first.check_held(A)
    with first.for_scope(A), first.for_scope(A):
        first.check_held(A)  # held, re-entered
        with pytest.raises(UnlockedWrite):
            first.check_held(B)
        with pytest.raises(UnlockedWrite):
            second.check_held(A)  # another process's lock object holds nothing
        seen: list[BaseException] = []
        worker = threading.Thread(target=lambda: _raised(lambda: first.check_held(A), seen))
        worker.start()
        worker.join(10)
        assert [type(e) for e in seen] == [UnlockedWrite]  # another thread of the process holds nothing either
        with psycopg.connect(postgres_dsn, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory'"
                          " AND classid = %s AND granted", (KEY_SPACE,))
        with second.for_scope(A):  # the other process may now erase the subject
            pass
        with pytest.raises(SubjectLockLost) as caught:
            first.check_held(A)
        assert caught.value.status == 503 and caught.value.code == "subject_lock_lost"
    assert first.lost == 1
    with pytest.raises(UnlockedWrite):
        first.check_held(A)


def _raised(call: Callable[[], None], into: list[BaseException]) -> None:
    try:
        call()
    except BaseException as exc:  # the test looks at its type
        into.append(exc)
