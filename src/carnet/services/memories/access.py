"""Access statistics, updated off the hot path: reads enqueue, a background thread writes in batches.

A batch the store fails to take (any exception) is held and merged into the next flush, up to
``max_attempts`` flushes and ``max_pending`` held ids in all; past that it is dropped and counted in
``dropped``. The thread itself never dies of a failure (``services.resilient``): it logs the error's
type, counts it, and backs off before the next flush.

The thread's flushes are paced: each subject's updates go in slices of at most ``SLICE`` records, and
after each slice the thread sleeps as long as the slice took (``PAUSE`` at least), so it never runs
for long at a time. Unpaced, a flush is one busy Python thread for a second or more (30 s of a loaded
server's reads), and every request thread that lets go of the GIL for a native call (each operator of
the model, each vector search) can wait up to the interpreter's switch interval to get it back: on 2
cores, at 25 assembles/s on 100k memories, p99 went from 47 ms without flushes to 492 ms with them, and
34 requests of 1,500 were refused (docs/benchmarks.md, "Load", where the slice sizes and pauses tried
are). A flush at shutdown (``stop``) is not paced, and one under way when ``stop`` is asked writes the
rest without its pauses.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

import structlog

from carnet.domain.records import Scope
from carnet.ports import AccessUpdate, SubjectLock, VectorIndex
from carnet.services.resilient import Resilient

log = structlog.get_logger(__name__)

SLICE = 32  # records written in one go by a paced flush (about 2.3 ms of work on this EPYC)
PAUSE = 0.001  # the shortest sleep after a slice of a paced flush (s)


@dataclass(slots=True)
class _Batch:
    updates: dict[str, AccessUpdate] = field(default_factory=dict)
    attempts: int = 0  # flushes that already failed to write it

    def add(self, update: AccessUpdate) -> None:
        prev = self.updates.get(update.memory_id)
        if prev is None:
            self.updates[update.memory_id] = update
        else:
            self.updates[update.memory_id] = AccessUpdate(memory_id=update.memory_id,
                                                          count_delta=prev.count_delta + update.count_delta,
                                                          at=max(prev.at, update.at))


class AccessRecorder:
    """Collects (scope, ids, at) from searches and flushes them every ``interval`` seconds.

    Losing a few counts is acceptable (they only nudge ranking); blocking a read is not."""

    def __init__(self, *, index: VectorIndex, locks: SubjectLock, interval: float = 0.5,
                 max_pending: int = 100_000, max_attempts: int = 5, guard: Resilient | None = None) -> None:
        self._index = index
        self._locks = locks
        self._interval = interval
        self._max_pending = max_pending
        self._max_attempts = max_attempts
        self._queue: queue.Queue[tuple[Scope, list[str], datetime]] = queue.Queue(maxsize=max_pending)
        self._held: dict[Scope, _Batch] = {}  # batches a failed flush kept for the next one
        self._flush_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self.guard = guard or Resilient("access", base_seconds=interval, max_seconds=max(60.0, interval))
        self.dropped = 0

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="carnet-access", daemon=True)
            self._thread.start()

    def pending(self) -> int:
        return self._queue.qsize() + sum(len(b.updates) for b in self._held.values())

    def record(self, scope: Scope, ids: list[str], at: datetime) -> None:
        if not ids:
            return
        try:
            self._queue.put_nowait((scope, ids, at))
        except queue.Full:
            self.dropped += 1

    def flush(self, *, paced: bool = False) -> None:
        """Write everything queued so far and what earlier failures held (at shutdown, by the thread,
        by tests). Every scope is tried; what a scope could not write is held for the next flush, and
        the first failure is raised once all were tried. ``paced``: slices and pauses (module doc)."""
        with self._flush_lock:
            first: Exception | None = None
            for scope, batch in self._take().items():
                updates = list(batch.updates.values())
                step = SLICE if paced else max(1, len(updates))
                for start in range(0, len(updates), step):
                    began = time.perf_counter()
                    try:
                        with self._locks.for_scope(scope):
                            self._index.record_access(scope, updates[start:start + step])
                    except Exception as exc:  # held for the next flush; the thread's guard logs and counts it
                        self._hold(scope, _Batch({u.memory_id: u for u in updates[start:]}, batch.attempts))
                        first = first or exc
                        break
                    finally:
                        if paced and not self._stopping.is_set():  # stopping: the rest goes at once
                            time.sleep(max(PAUSE, time.perf_counter() - began))
            if first is not None:
                raise first

    def stop(self) -> None:
        if self._thread is not None:
            self._stopping.set()
            self._thread.join(timeout=5)
            self._thread = None
        self.guard.run(self.flush)

    def _take(self) -> dict[Scope, _Batch]:
        batches: dict[Scope, _Batch] = defaultdict(_Batch)
        for scope, held in self._held.items():
            batches[scope] = held
        self._held = {}
        while True:
            try:
                scope, ids, at = self._queue.get_nowait()
            except queue.Empty:
                break
            for mid in ids:
                batches[scope].add(AccessUpdate(memory_id=mid, count_delta=1, at=at))
        return dict(batches)

    def _hold(self, scope: Scope, batch: _Batch) -> None:
        batch.attempts += 1
        held = sum(len(b.updates) for b in self._held.values())
        if batch.attempts >= self._max_attempts or held + len(batch.updates) > self._max_pending:
            self.dropped += len(batch.updates)
            log.warning("access_stats_dropped", records=len(batch.updates), attempts=batch.attempts)
            return
        self._held[scope] = batch

    def _run(self) -> None:
        while not self._stopping.wait(self._interval + self.guard.backoff()):
            self.guard.run(lambda: self.flush(paced=True))
