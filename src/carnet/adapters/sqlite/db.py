"""What the SQLite adapters share: one connection per store opened the same way, and the
``BEGIN IMMEDIATE`` transaction that serializes writers across threads and processes."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from carnet.errors import DependencyUnavailable
from carnet.private_fs import private_dir, private_file, tighten_existing


def open_db(path: Path, *, schema: str, synchronous: Literal["NORMAL", "FULL"]) -> sqlite3.Connection:
    """Autocommit mode (transactions are explicit), usable from several threads under the caller's
    lock, WAL so readers never wait on a writer; ``FULL`` when an acknowledged write must survive a
    power cut."""
    private_dir(path.parent)
    private_file(path)  # SQLite gives its -wal and -shm files the database file's mode
    tighten_existing(path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm"))
    db = sqlite3.connect(path, check_same_thread=False, timeout=10.0, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(f"PRAGMA synchronous={synchronous}")
    db.executescript(schema)
    return db


@contextmanager
def immediate(db: sqlite3.Connection, lock: threading.Lock) -> Iterator[sqlite3.Connection]:
    """One write transaction, taken at once (another process writing makes it wait, up to the
    connection's timeout); rolled back if the block raises."""
    with lock:
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")


@contextmanager
def guarded(db: sqlite3.Connection, lock: threading.Lock, what: str) -> Iterator[sqlite3.Connection]:
    """``immediate``, with any SQLite failure raised as ``DependencyUnavailable`` naming ``what``
    (a locked or corrupt file is the store being unavailable, never a 500 with SQL in it)."""
    try:
        with immediate(db, lock) as conn:
            yield conn
    except sqlite3.Error as exc:
        raise DependencyUnavailable(f"{what} is unavailable") from exc
