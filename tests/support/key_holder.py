"""A process that holds a subject's data key in its keyring cache and says when it is gone
(``python -m tests.support.key_holder DSN KEY_DIR TENANT SUBJECT``), for the cross-process
key-invalidation test. It shares only the key store (files) and PostgreSQL with the test.

It prints ``ready`` once it listens on ``carnet_keys`` and holds the key, then ``gone`` when the key
has left its cache, then ``destroyed`` if reading the key again fails with ``KeyDestroyed`` (the
stored key is gone too). It never reloads the key meanwhile: only the listener can take it out."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from carnet.adapters.keystores.files import FileKeyStore
from carnet.adapters.kms.dev import DevKms
from carnet.adapters.postgres.key_invalidations import PostgresKeyInvalidations, listener_conninfo
from carnet.crypto.errors import KeyDestroyed
from carnet.crypto.keyring import Keyring
from carnet.logs import configure
from tests.support.postgres import open_test_pool

DEADLINE_S = 30.0


class KeyringEvictions:
    """``CacheEvictions`` over a keyring alone (what bootstrap's ``CachedCopies`` does first)."""

    def __init__(self, keyring: Keyring) -> None:
        self.keyring = keyring

    def evict(self, tenant: str, subject: str | None) -> None:
        self.keyring.evict(tenant, subject)

    def evict_all(self) -> None:
        self.keyring.evict_all()


def main(dsn: str, key_dir: str, tenant: str, subject: str) -> int:
    configure("WARNING")  # logs to stderr: stdout is the conversation with the test
    invalidations = PostgresKeyInvalidations(open_test_pool(dsn, size=1), listener_conninfo(dsn), poll_seconds=0.2)
    keyring = Keyring(DevKms(Path(key_dir) / "kms"), FileKeyStore(Path(key_dir) / "subjects"),
                      invalidations=invalidations)
    try:
        invalidations.subscribe(KeyringEvictions(keyring))
        if not invalidations.listening.wait(DEADLINE_S):
            return 3
        key_id = keyring.data_key(tenant, subject).key_id  # cached after the first flush
        print("ready", flush=True)
        deadline = time.monotonic() + DEADLINE_S
        while keyring.cached(tenant, subject):
            if time.monotonic() > deadline:
                print("still-cached", flush=True)
                return 1
            time.sleep(0.002)
        print("gone", flush=True)
        try:
            keyring.read_key(tenant, subject, key_id)
        except KeyDestroyed:
            print("destroyed", flush=True)
        return 0
    finally:
        invalidations.close()


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:5]))
