"""``SubjectLock`` on PostgreSQL: a subject's writes serialised across every API and ``carnet worker``
process of every node, with session-level advisory locks (``pg_advisory_lock(int4, int4)``).

- Keys: ``(0x43524E53 "CRNS", 32 bits of BLAKE2b(tenant, subject hash))``. Stable across processes,
  Python versions and restarts (Python's ``hash()`` is salted per process); the subject is already a
  keyed hash, so ``pg_locks`` shows no personal data. Two subjects may share a key (one chance in
  2^32): they then wait for each other, never run together. The intake queue's transaction-scoped
  locks use another key space (``0x43524E54``).
- One pooled connection is held for as long as the lock is: the lock belongs to that session, so
  when the process dies, or its connection drops, PostgreSQL releases it — no lease to expire.
- Re-entrant per thread and key: a worker holds the lock around ``remember``, which takes it again;
  the inner calls reuse the outer connection and only the outermost exit unlocks.
- Bounded: the pool wait plus ``pg_advisory_lock``'s wait (``lock_timeout``) never exceed the
  timeout; past it, ``SubjectBusy`` (503, ``Retry-After``) and nothing was written.
- The connection always goes back to the pool; if the unlock fails (connection lost), it is closed
  instead, so no lock can survive on a pooled session.
- ``check_held(scope)``: the key ring asks it before it creates a subject's data key. A session
  that ended while its write went on (a PostgreSQL restart) no longer holds the lock, so an erasure
  may have run meanwhile: the write then stops (``SubjectLockLost``) rather than create a new key
  for a subject erased under it.
- ``on_acquire(scope)`` runs each time this process takes a subject's lock (outermost only): another
  process may have erased the subject since this one last wrote it, so bootstrap drops what this
  process cached about it there (data key, registration, pseudonym map) before anything is written.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass

import psycopg
import psycopg.errors
import structlog
from psycopg_pool import PoolTimeout

from carnet.adapters.postgres.pool import Connection, Pool
from carnet.domain.records import Scope
from carnet.errors import DependencyUnavailable, SubjectBusy, SubjectLockLost, UnlockedWrite

log = structlog.get_logger(__name__)

KEY_SPACE = 0x43524E53  # "CRNS": a subject of the write path (the intake queue's is "CRNT")


def lock_key(scope: Scope) -> int:
    """The advisory lock's second key: a signed 32-bit integer, the same in every process."""
    digest = hashlib.blake2b(f"{scope.tenant}\x1f{scope.subject}".encode(), digest_size=4,
                             person=b"carnet-lock").digest()
    return int.from_bytes(digest, "big", signed=True)


@dataclass(slots=True)
class _Held:
    conn: Connection
    depth: int


class PostgresSubjectLocks:
    """``SubjectLock`` over a pool of its own (sized like the others: at most ``pool_size`` subjects
    locked at once by this process; more writers wait for a connection, within the timeout)."""

    def __init__(self, pool: Pool, *, timeout: float = 30.0,
                 on_acquire: Callable[[Scope], None] = lambda scope: None) -> None:
        if timeout <= 0:
            raise ValueError("the lock timeout must be positive")
        self._pool = pool
        self._on_acquire = on_acquire
        self._timeout = timeout
        self._local = threading.local()
        self.lost = 0  # unlocks that found the lock already gone (connection dropped): read by tests, logs

    def for_scope(self, scope: Scope) -> AbstractContextManager[object]:
        return self._locked(scope, lock_key(scope))

    def check_held(self, scope: Scope) -> None:
        """That this thread holds the subject's lock and that the session holding it is still open
        (one round trip): ``UnlockedWrite`` if it holds none, ``SubjectLockLost`` if the session
        ended (PostgreSQL released the lock with it, so another process may have erased the subject)."""
        mine = self._local.__dict__.get("held", {}).get(lock_key(scope))
        if mine is None:
            raise UnlockedWrite()
        try:
            mine.conn.execute("SELECT 1").fetchone()
        except psycopg.Error as exc:
            raise SubjectLockLost() from exc

    @contextmanager
    def _locked(self, scope: Scope, key: int) -> Iterator[None]:
        held: dict[int, _Held] = self._local.__dict__.setdefault("held", {})
        mine = held.get(key)
        if mine is not None:  # re-entered by the thread that holds it
            mine.depth += 1
            try:
                yield
            finally:
                mine.depth -= 1
            return
        conn = self._acquire(key)
        held[key] = _Held(conn, 1)
        try:
            self._on_acquire(scope)
            yield
        finally:
            del held[key]
            self._release(conn, key)

    def _acquire(self, key: int) -> Connection:
        """``pool.getconn`` then ``SET lock_timeout`` and ``SELECT pg_advisory_lock(KEY_SPACE, key)``."""
        deadline = time.monotonic() + self._timeout
        try:
            conn = self._pool.getconn(timeout=self._timeout)
        except PoolTimeout as exc:
            raise SubjectBusy(self._timeout) from exc
        try:
            left_ms = max(1, int((deadline - time.monotonic()) * 1000))
            conn.execute("SELECT set_config('lock_timeout', %s, false)", (f"{left_ms}ms",))
            conn.execute("SELECT pg_advisory_lock(%s, %s)", (KEY_SPACE, key))
        except psycopg.errors.LockNotAvailable as exc:
            self._pool.putconn(conn)
            raise SubjectBusy(self._timeout) from exc
        except psycopg.Error as exc:
            self._discard(conn)
            raise DependencyUnavailable("the subject lock is unavailable (PostgreSQL)") from exc
        except BaseException:  # interrupted while waiting: the session may hold the lock, drop it
            self._discard(conn)
            raise
        return conn

    def _release(self, conn: Connection, key: int) -> None:
        """``SELECT pg_advisory_unlock(KEY_SPACE, key)``; the connection back to the pool."""
        try:
            row = conn.execute("SELECT pg_advisory_unlock(%s, %s)", (KEY_SPACE, key)).fetchone()
        except psycopg.Error:
            row = None
        if row is None or row[0] is not True:
            # The session was gone (or no longer held the lock): someone else may have written
            # meanwhile. Nothing to undo here; say so, and never reuse this session.
            self.lost += 1
            log.warning("subject_lock_lost")
            self._discard(conn)
            return
        self._pool.putconn(conn)

    def _discard(self, conn: Connection) -> None:
        """Close the session (PostgreSQL drops its locks with it), then hand it back so the pool
        replaces it."""
        conn.close()
        self._pool.putconn(conn)

    def close(self) -> None:
        self._pool.close()
