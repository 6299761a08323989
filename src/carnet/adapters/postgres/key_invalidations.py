"""``KeyInvalidations`` on PostgreSQL: ``NOTIFY carnet_keys`` when a key is destroyed, and in every
process a listener thread that evicts it from that process's caches.

- Publish: ``SELECT pg_notify('carnet_keys', payload)`` on a pooled autocommit connection, after the
  key store has deleted the key (the key store is Vault KV or files, not this database, so there is
  no transaction to share). The payload is ``{"v": 1, "t": tenant, "s": subject hash | null}``: the
  keyed subject hash the keyring files the key under (the same value the erasure ledger holds),
  never a subject id. A publish that fails is logged and counted (``failures``), never raised: the
  key is destroyed already and the erasure must go on; the other processes then drop it at their TTL.
- Listen: one dedicated connection per process (``LISTEN carnet_keys``), read by a daemon thread with
  ``conn.notifies(timeout=…)``. PostgreSQL delivers a notification to every listening session when
  the sending transaction commits, so a key is evicted milliseconds after the shred (the documented
  bound is 2 s; ``tests/integration/test_postgres_key_invalidations.py`` measures it across processes).
- Missed messages: notifications sent while a session does not listen are lost to it. So the whole
  cache is flushed (``evict_all``) when the connection is lost and again each time ``LISTEN`` is in
  place (the first time included: what was cached before listening may be stale). Reconnection backs
  off from 0.5 s, doubling, to ``backoff_max``. TCP keepalives and ``tcp_user_timeout`` on that
  connection turn a silent network partition into a lost connection within about 30 s.
- This process hears its own messages too: it evicts a key it has just forgotten, which costs nothing.
"""

from __future__ import annotations

import json
import threading
import uuid

import psycopg
import structlog
from psycopg.conninfo import make_conninfo

from carnet.adapters.postgres.pool import UNAVAILABLE, Pool, connection
from carnet.errors import DependencyUnavailable
from carnet.ports import CacheEvictions

log = structlog.get_logger(__name__)

CHANNEL = "carnet_keys"
_FIRST_BACKOFF = 0.5
_ERRORS: tuple[type[Exception], ...] = (psycopg.Error, *UNAVAILABLE)
# A dead peer is noticed by the kernel within keepalives_idle + interval × count seconds, and a write
# that is never acknowledged fails after tcp_user_timeout (ignored on a Unix socket).
_KEEPALIVES = {"keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5, "keepalives_count": 3,
               "tcp_user_timeout": 30_000}


def listener_conninfo(info: str) -> str:
    """The listener's connection string: ``info`` with TCP keepalives (a partition becomes an error)."""
    return make_conninfo(info, **_KEEPALIVES)


def payload(tenant: str, subject: str | None) -> str:
    return json.dumps({"v": 1, "t": tenant, "s": subject}, sort_keys=True)


def _unsent() -> DependencyUnavailable:
    return DependencyUnavailable("key invalidation: cannot notify PostgreSQL")


class PostgresKeyInvalidations:
    def __init__(self, pool: Pool, listen_info: str, *, backoff_max: float = 10.0, poll_seconds: float = 1.0) -> None:
        if backoff_max < _FIRST_BACKOFF or poll_seconds <= 0:
            raise ValueError(f"need backoff_max >= {_FIRST_BACKOFF} and poll_seconds > 0")
        self._pool, self._info = pool, listen_info
        self._backoff_max, self._poll = backoff_max, poll_seconds
        self._stop = threading.Event()
        self._wake = f"carnet_keys_stop_{uuid.uuid4().hex}"  # close() notifies it: no wait for the poll
        self._thread: threading.Thread | None = None
        self.listening = threading.Event()  # set while LISTEN is in place (tests wait on it)
        self.failures = 0  # publishes that could not be sent
        self.errors = 0  # listener sessions lost (each followed by a flush): /metrics, background errors
        self.flushes = 0  # evict_all calls

    def publish(self, tenant: str, subject: str | None) -> None:
        """``SELECT pg_notify('carnet_keys', '{"s": …, "t": …, "v": 1}')``; never raises."""
        try:
            with connection(self._pool, _unsent, catch=_ERRORS) as db:
                db.execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload(tenant, subject)))
        except DependencyUnavailable:
            self.failures += 1
            log.warning("key_invalidation_not_sent", tenant=tenant, bound="the keyring's TTL")

    def subscribe(self, evictions: CacheEvictions) -> None:
        if self._thread is not None:
            raise RuntimeError("already listening")
        self._thread = threading.Thread(target=self._run, args=(evictions,), name="carnet-key-listener", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            try:
                with connection(self._pool, _unsent, catch=_ERRORS) as db:
                    db.execute("SELECT pg_notify(%s, '')", (self._wake,))
            except DependencyUnavailable:
                pass  # the listener then stops at its next poll
            self._thread.join(timeout=self._poll + 5)
        self._pool.close()

    def _run(self, evictions: CacheEvictions) -> None:
        delay = _FIRST_BACKOFF
        while not self._stop.is_set():
            try:
                self._listen(evictions)
                return  # stopped
            except Exception as exc:  # the thread's edge (as services/resilient.py): logged without data, retried
                self.listening.clear()
                self.errors += 1
                self._flush(evictions)
                log.warning("key_listener_lost", error=type(exc).__name__, retry_in=delay)
            if self._stop.wait(delay):
                return
            delay = min(delay * 2, self._backoff_max)

    def _listen(self, evictions: CacheEvictions) -> None:
        """One session: ``LISTEN``, flush, then apply notifications until stopped or the session fails."""
        with psycopg.connect(self._info, autocommit=True) as conn:
            conn.execute(f"LISTEN {CHANNEL}")
            conn.execute(f"LISTEN {self._wake}")
            self._flush(evictions)  # anything cached until now may have been shredded unheard
            self.listening.set()
            log.info("key_listener_listening", channel=CHANNEL)
            while not self._stop.is_set():
                for note in conn.notifies(timeout=self._poll):
                    if note.channel == CHANNEL:
                        self._apply(evictions, note.payload)
                    if self._stop.is_set():
                        break
            self.listening.clear()

    def _apply(self, evictions: CacheEvictions, text: str) -> None:
        try:
            doc = json.loads(text)
            tenant, subject = doc["t"], doc["s"]
            if doc["v"] != 1 or not isinstance(tenant, str) or not (subject is None or isinstance(subject, str)):
                raise ValueError("unknown message")
        except (ValueError, KeyError, TypeError):
            log.warning("key_invalidation_unreadable")  # from a newer Carnet, say: drop everything to be safe
            self._flush(evictions)
            return
        evictions.evict(tenant, subject)

    def _flush(self, evictions: CacheEvictions) -> None:
        self.flushes += 1
        evictions.evict_all()
