"""Per-subject serialization of writes (reconcile reads then writes: two writers would race): the
in-process ``SubjectLock``, right where one process owns the stores (the embedded default). Several
processes sharing a PostgreSQL control plane use ``carnet.adapters.postgres.locks`` instead; only
this one can ``paused()`` every write for a backup, which covers the embedded default only."""

from __future__ import annotations

import threading
import zlib
from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager

from carnet.domain.records import Scope
from carnet.errors import UnlockedWrite


class SubjectLocks:
    """A fixed table of locks, striped by scope hash: bounded memory whatever the number of subjects.
    Two subjects may share a stripe (they then wait for each other), never one subject two stripes."""

    def __init__(self, stripes: int = 256) -> None:
        # Re-entrant: an intake worker holds its subject's lock around `remember`, which takes it again.
        self._locks = [threading.RLock() for _ in range(stripes)]
        self._local = threading.local()  # the stripes this thread holds, with their depth

    def for_scope(self, scope: Scope) -> AbstractContextManager[object]:
        return self._held(self._stripe(scope))

    def check_held(self, scope: Scope) -> None:
        """``UnlockedWrite`` unless this thread holds the subject's lock (its stripe) now."""
        if not self._depths().get(self._stripe(scope)):
            raise UnlockedWrite()

    def _stripe(self, scope: Scope) -> int:
        return zlib.crc32(f"{scope.tenant}\x1f{scope.subject}".encode()) % len(self._locks)

    def _depths(self) -> dict[int, int]:
        depths: dict[int, int] = self._local.__dict__.setdefault("depths", {})
        return depths

    @contextmanager
    def _held(self, stripe: int) -> Iterator[None]:
        with self._locks[stripe]:
            depths = self._depths()
            depths[stripe] = depths.get(stripe, 0) + 1
            try:
                yield
            finally:
                depths[stripe] -= 1

    def close(self) -> None:
        """Nothing to release: the locks live and die with the process."""

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Every stripe, taken in order: no subject's write runs until the block ends (a backup copies
        the stores meanwhile; reads go on). This is why every write to a subject's records or catalog
        rows holds its subject's lock. Do not call it while holding a subject's lock."""
        with ExitStack() as stack:
            for lock in self._locks:
                stack.enter_context(lock)
            yield
