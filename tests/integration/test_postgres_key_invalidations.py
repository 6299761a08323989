"""Key-cache invalidation across processes (``NOTIFY``/``LISTEN carnet_keys``): a key shredded by one
process leaves every other process's cache within the documented bound (2 s), a tenant shred takes
all of the tenant's, and a listener that lost its session flushes the whole cache.

The first test runs the holder as its own process (``tests/support/key_holder.py``); the others use
two keyrings in this process, each with its own pool and listening session, which is how two
processes meet PostgreSQL (they share nothing else but the key store's files)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
from psycopg.conninfo import make_conninfo

from carnet.adapters.keystores.files import FileKeyStore
from carnet.adapters.kms.dev import DevKms
from carnet.adapters.postgres.key_invalidations import CHANNEL, PostgresKeyInvalidations, listener_conninfo
from carnet.crypto.keyring import Keyring
from tests.support.key_holder import KeyringEvictions
from tests.support.postgres import open_test_pool

ROOT = Path(__file__).resolve().parents[2]
BOUND_S = 2.0  # docs/operations.md, "Key cache across processes"
TENANT, OTHER_TENANT = "assur-nord", "banque-sud"
ALICE, BOB = "a" * 32, "b" * 32  # keyed subject hashes, as the keyring files keys
LISTENER = "carnet-test-listener"


def _ring(keys: Path, invalidations: PostgresKeyInvalidations | None = None) -> Keyring:
    kms = DevKms(keys / "kms")
    for tenant in (TENANT, OTHER_TENANT):
        kms.ensure_tenant_key(tenant)
    return Keyring(kms, FileKeyStore(keys / "subjects"), invalidations=invalidations)


@contextmanager
def _publisher(dsn: str) -> Iterator[PostgresKeyInvalidations]:
    inv = PostgresKeyInvalidations(open_test_pool(dsn, size=1), listener_conninfo(dsn))
    try:
        yield inv
    finally:
        inv.close()


@contextmanager
def _listening(dsn: str, keys: Path) -> Iterator[tuple[Keyring, PostgresKeyInvalidations]]:
    inv = PostgresKeyInvalidations(open_test_pool(dsn, size=1),
                                   listener_conninfo(make_conninfo(dsn, application_name=LISTENER)),
                                   backoff_max=0.5, poll_seconds=0.2)
    ring = _ring(keys, inv)
    inv.subscribe(KeyringEvictions(ring))
    try:
        assert inv.listening.wait(10)
        yield ring, inv
    finally:
        inv.close()


def _within(bound: float, done: Callable[[], bool]) -> float:
    """Seconds until ``done()``; fails past ``bound``."""
    started = time.monotonic()
    while not done():
        assert time.monotonic() - started < bound, f"not within {bound} s"
        time.sleep(0.002)
    return time.monotonic() - started


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # free once closed: nothing listens there


def _line(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    return proc.stdout.readline().strip()


def test_a_shred_reaches_another_process_within_the_bound(tmp_path: Path, postgres_dsn: str) -> None:
    keys = tmp_path / "keys"
    with _publisher(postgres_dsn) as publisher:
        shredder = _ring(keys, publisher)
        shredder.data_key(TENANT, ALICE)  # the subject's key, stored wrapped in the shared key store
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        argv = [sys.executable, "-m", "tests.support.key_holder", postgres_dsn, str(keys), TENANT, ALICE]
        with subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True) as holder:
            try:
                assert _line(holder) == "ready"  # listening, the key in its cache
                time.sleep(0.3)  # it keeps the key while nothing is said (a key is not dropped by itself)
                started = time.monotonic()
                assert shredder.shred(TENANT, ALICE)
                assert _line(holder) == "gone"
                took = time.monotonic() - started
                assert _line(holder) == "destroyed"  # and it cannot load it again
                assert holder.wait(timeout=30) == 0
            finally:
                holder.kill()
    assert took < BOUND_S


def test_a_tenant_shred_drops_every_key_of_the_tenant_elsewhere(tmp_path: Path, postgres_dsn: str) -> None:
    keys = tmp_path / "keys"
    with _publisher(postgres_dsn) as publisher, _listening(postgres_dsn, keys) as (holder, _):
        for tenant, subject in ((TENANT, ALICE), (TENANT, BOB), (OTHER_TENANT, ALICE)):
            holder.data_key(tenant, subject)
        assert _ring(keys, publisher).shred_tenant(TENANT) == 2
        _within(BOUND_S, lambda: not holder.cached(TENANT, ALICE) and not holder.cached(TENANT, BOB))
        assert holder.cached(OTHER_TENANT, ALICE)  # another tenant's keys stay


def test_a_lost_listener_flushes_the_cache_and_listens_again(tmp_path: Path, postgres_dsn: str) -> None:
    keys = tmp_path / "keys"
    with _publisher(postgres_dsn) as publisher, _listening(postgres_dsn, keys) as (holder, inv):
        holder.data_key(TENANT, ALICE)
        with psycopg.connect(postgres_dsn, autocommit=True) as admin:
            row = admin.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                                " WHERE application_name = %s", (LISTENER,)).fetchone()
        assert row == (1,)
        # Whatever was shredded while it did not listen is unknown to it: every key goes, unasked.
        _within(BOUND_S, lambda: not holder.cached(TENANT, ALICE))
        assert inv.errors == 1
        _within(10, inv.listening.is_set)  # reconnected (backoff 0.5 s)
        holder.data_key(TENANT, BOB)
        _ring(keys, publisher).shred(TENANT, BOB)
        _within(BOUND_S, lambda: not holder.cached(TENANT, BOB))  # heard again


def test_an_unreadable_message_flushes_everything(tmp_path: Path, postgres_dsn: str) -> None:
    with _listening(postgres_dsn, tmp_path / "keys") as (holder, inv):
        holder.data_key(TENANT, ALICE)
        flushes = inv.flushes
        with psycopg.connect(postgres_dsn, autocommit=True) as db:
            db.execute("SELECT pg_notify(%s, %s)", (CHANNEL, '{"v": 9}'))  # a newer Carnet's, say
        _within(BOUND_S, lambda: not holder.cached(TENANT, ALICE))
        assert inv.flushes == flushes + 1


def test_a_publish_that_cannot_be_sent_is_counted_not_raised(tmp_path: Path, postgres_dsn: str) -> None:
    with _publisher(postgres_dsn) as publisher:
        ring = _ring(tmp_path / "keys", publisher)
        ring.data_key(TENANT, ALICE)
        publisher.close()  # PostgreSQL out of reach
        assert ring.shred(TENANT, ALICE)  # the key is destroyed all the same
        assert publisher.failures == 1


class CountingEvictions:
    def __init__(self) -> None:
        self.flushes = 0

    def evict(self, tenant: str, subject: str | None) -> None:
        raise AssertionError("nothing can be heard")

    def evict_all(self) -> None:
        self.flushes += 1


def test_a_listener_that_cannot_connect_keeps_flushing(postgres_dsn: str) -> None:
    """While it cannot listen, every failed attempt empties the caches again: what this process
    caches meanwhile may be shredded unheard."""
    nowhere = f"host=127.0.0.1 port={_closed_port()} dbname=x user=x connect_timeout=2"
    inv = PostgresKeyInvalidations(open_test_pool(postgres_dsn, size=1), nowhere, backoff_max=0.5, poll_seconds=0.2)
    counted = CountingEvictions()
    inv.subscribe(counted)
    try:
        _within(10, lambda: counted.flushes >= 3)  # 0.5 s apart at most
        assert inv.errors >= 3 and not inv.listening.is_set()
    finally:
        inv.close()
