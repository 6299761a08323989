"""Per-subject serialization of writes (reconcile reads then writes: two writers would race)."""

from __future__ import annotations

import threading
import zlib

from carnet.domain.records import Scope


class SubjectLocks:
    """A fixed table of locks, striped by scope hash: bounded memory whatever the number of subjects.
    Two subjects may share a stripe (they then wait for each other), never one subject two stripes."""

    def __init__(self, stripes: int = 256) -> None:
        self._locks = [threading.Lock() for _ in range(stripes)]

    def for_scope(self, scope: Scope) -> threading.Lock:
        h = zlib.crc32(f"{scope.tenant}\x1f{scope.subject}".encode())
        return self._locks[h % len(self._locks)]
