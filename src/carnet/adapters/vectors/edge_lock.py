"""The embedded shard's owner lock: one process at a time opens a qdrant-edge shard.

``flock(LOCK_EX | LOCK_NB)`` on ``<shard>/carnet.lock``: the kernel drops it when the process dies,
so a crash never leaves a stale lock behind. The pid written inside is informational only."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from carnet.errors import StoreLocked

LOCK_FILE = "carnet.lock"


def lock(path: Path) -> int:
    """``flock(LOCK_EX | LOCK_NB)`` on ``<path>/carnet.lock``; the kernel drops it if the process dies."""
    fd = os.open(path / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise StoreLocked(
            f"the vector store at {path} is held by another process (is `carnet serve` running?)",
            path=str(path),
        ) from None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())  # informational only: the flock is the lock
    return fd


def unlock(fd: int) -> None:
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)


@contextmanager
def held(path: Path) -> Iterator[None]:
    """The shard's owner lock without opening the shard (a restore replaces its files): raises
    ``StoreLocked`` while another process owns it."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = lock(path)
    try:
        yield
    finally:
        unlock(fd)
