"""Access statistics, updated off the hot path: reads enqueue, a background thread writes in batches."""

from __future__ import annotations

import queue
import threading
from collections import defaultdict
from datetime import datetime

import structlog

from carnet.domain.records import Scope
from carnet.errors import CarnetError
from carnet.ports import AccessUpdate, SubjectLock, VectorIndex

log = structlog.get_logger(__name__)


class AccessRecorder:
    """Collects (scope, ids, at) from searches and flushes them every ``interval`` seconds.

    Losing a few counts on a crash is acceptable (they only nudge ranking); blocking a read is not."""

    def __init__(self, *, index: VectorIndex, locks: SubjectLock, interval: float = 0.5,
                 max_pending: int = 100_000) -> None:
        self._index = index
        self._locks = locks
        self._interval = interval
        self._queue: queue.Queue[tuple[Scope, list[str], datetime]] = queue.Queue(maxsize=max_pending)
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self.dropped = 0

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="carnet-access", daemon=True)
            self._thread.start()

    def pending(self) -> int:
        return self._queue.qsize()

    def record(self, scope: Scope, ids: list[str], at: datetime) -> None:
        if not ids:
            return
        try:
            self._queue.put_nowait((scope, ids, at))
        except queue.Full:
            self.dropped += 1

    def flush(self) -> None:
        """Write everything queued so far (used at shutdown and by tests)."""
        batch: dict[Scope, dict[str, AccessUpdate]] = defaultdict(dict)
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            scope, ids, at = item
            for mid in ids:
                prev = batch[scope].get(mid)
                count = prev.count_delta + 1 if prev else 1
                batch[scope][mid] = AccessUpdate(memory_id=mid, count_delta=count, at=at)
        for scope, updates in batch.items():
            try:
                with self._locks.for_scope(scope):
                    self._index.record_access(scope, list(updates.values()))
            except CarnetError as exc:
                log.warning("access_stats_failed", error=exc.code)

    def stop(self) -> None:
        if self._thread is not None:
            self._stopping.set()
            self._thread.join(timeout=5)
            self._thread = None
        self.flush()

    def _run(self) -> None:
        while not self._stopping.wait(self._interval):
            self.flush()
