"""The audit trail as the services use it: writes are recorded before they happen, reads in batches.

A write (remember, rectify, delete, erase, export, key and admin operations) appends its entry
synchronously before the operation runs: if the entry cannot be stored the operation is refused
(``AuditUnavailable``), so nothing changes without a trace. Should the operation then fail, a second
entry records the failure; a refusal found before the operation (role, input, unknown subject, legal
hold: ``carnet.services.door``) never opens an entry here, it is recorded once as ``refused``.
Reads (search, assemble, list, get) are queued and appended in batches by a background thread, so
the assemble hot path never waits on a disk sync; a read the process had queued when it was killed
is the only thing that can be lost, and ``dropped`` counts any overflow. Whatever the log raises, the
batch is kept for the next flush and the thread goes on (``services.resilient``: logged by type,
counted, backed off).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import structlog

from carnet.domain.audit import AuditEvent, DetailValue, Verdict, verify
from carnet.errors import CarnetError
from carnet.ports import AuditLog, Clock
from carnet.services.resilient import Resilient

log = structlog.get_logger(__name__)

# Store-wide operations (backups, restores) are audited in their own chain; "_system" can never be a
# tenant's name (tenant names start with a letter or digit).
SYSTEM_CHAIN = "_system"


class AuditTrail:
    def __init__(self, log_: AuditLog, clock: Clock, *, interval: float = 0.5, max_pending: int = 100_000,
                 guard: Resilient | None = None) -> None:
        self.log = log_
        self._clock = clock
        self._interval = interval
        self._max_pending = max_pending
        self._queue: queue.Queue[AuditEvent] = queue.Queue(maxsize=max_pending)
        self._pending: list[AuditEvent] = []
        self._flush_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self.guard = guard or Resilient("audit", base_seconds=interval, max_seconds=max(60.0, interval))
        self.dropped = 0

    def event(self, *, tenant: str, actor: str, action: str, subject: str | None = None,
              targets: tuple[str, ...] = (), outcome: str = "ok",
              detail: Mapping[str, DetailValue] | None = None) -> AuditEvent:
        return AuditEvent(tenant=tenant, actor=actor, action=action, at=self._clock.now(), subject=subject,
                          targets=targets, outcome=outcome, detail=detail or {})

    def record(self, event: AuditEvent) -> None:
        """Append now; raises ``AuditUnavailable`` if the entry cannot be stored."""
        self.log.append([event])

    @contextmanager
    def recorded(self, event: AuditEvent) -> Iterator[None]:
        """Record ``event``, run the block, and record a ``failed`` entry if the block raises."""
        self.record(event)
        try:
            yield
        except CarnetError as exc:
            self._failed(event, exc.code)
            raise
        except Exception:
            self._failed(event, "internal_error")
            raise

    def _failed(self, event: AuditEvent, code: str) -> None:
        try:
            self.record(self.event(tenant=event.tenant, actor=event.actor, action=event.action,
                                   subject=event.subject, targets=event.targets, outcome="failed",
                                   detail={"error": code}))
        except CarnetError:
            log.error("audit_failure_not_recorded", action=event.action)

    def pending(self) -> int:
        return self._queue.qsize() + len(self._pending)

    def read(self, event: AuditEvent) -> None:
        """Queue a read; the background thread appends it with the next batch."""
        try:
            self._queue.put_nowait(event)
        except queue.Full:
            self.dropped += 1
            log.error("audit_read_dropped", action=event.action)

    def flush(self) -> None:
        """Append the queued reads now; if the log cannot take them they are kept for the next flush."""
        try:
            self._write()
        except CarnetError as exc:  # kept for the next flush
            log.warning("audit_flush_failed", error=exc.code, pending=self.pending())

    def _write(self) -> None:
        """Move queued reads to the batch (at most ``max_pending`` held: beyond, the queue fills and
        ``read`` counts what it drops) and append the batch; raises what the log raises, the batch kept."""
        with self._flush_lock:
            while len(self._pending) < self._max_pending:
                try:
                    self._pending.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            if not self._pending:
                return
            self.log.append(self._pending)
            self._pending = []

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="carnet-audit", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self._stopping.set()
            self._thread.join(timeout=5)
            self._thread = None
        self.guard.run(self._write)

    def _run(self) -> None:
        while not self._stopping.wait(self._interval + self.guard.backoff()):
            self.guard.run(self._write)

    def verify(self, tenant: str) -> Verdict:
        self.flush()
        return verify(tenant, self.log.entries(tenant), self.log.head(tenant))
