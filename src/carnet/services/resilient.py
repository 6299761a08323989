"""The edge of a background thread: a unit of work that fails, whatever it raises, is survived.

Every background thread of a Carnet process (the access recorder, the audit read batcher, the
scheduler, the intake workers) runs its work through a ``Resilient`` guard: an exception is logged
with its error code or its type only (never its message or traceback, which could carry data),
counted (``carnet_background_errors_total{thread=...}`` on ``/metrics``), and the thread goes on
after a pause that doubles with each failure in a row, up to a cap, and drops back once a unit
succeeds. The work itself keeps what it had not finished (a batch, an intake) for the next unit.

This is the one place where ``except Exception`` is allowed to swallow (STYLE.md): there is no caller
left to hand the error to, and a thread that dies stops the work for every tenant until a restart.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import structlog

from carnet.errors import CarnetError

log = structlog.get_logger(__name__)


def error_label(exc: BaseException) -> str:
    """What may be logged of an exception: its error code, or its type; never its message."""
    return exc.code if isinstance(exc, CarnetError) else type(exc).__name__


class Resilient:
    """One thread's guard: ``run`` a unit of work, ``backoff()`` before the next one."""

    def __init__(self, thread: str, *, base_seconds: float = 0.5, max_seconds: float = 60.0) -> None:
        if base_seconds <= 0 or max_seconds < base_seconds:
            raise ValueError("backoff needs 0 < base_seconds <= max_seconds")
        self.thread = thread  # a fixed name (the metric's label): never a tenant, subject or owner
        self._base = base_seconds
        self._max = max_seconds
        self._lock = threading.Lock()
        self._errors = 0
        self._streak = 0

    @property
    def errors(self) -> int:
        """Units of work that raised since the process started (a monotonic counter)."""
        return self._errors

    def run(self, work: Callable[[], object]) -> bool:
        """Run ``work``; ``False`` if it raised (logged and counted, never re-raised)."""
        try:
            work()
        except Exception as exc:  # the edge of a background thread: logged without data, counted, retried
            self.failed(exc)
            return False
        with self._lock:
            self._streak = 0
        return True

    def failed(self, exc: BaseException) -> None:
        """Log and count a failure the caller caught itself (its work is kept for a retry)."""
        with self._lock:
            self._errors += 1
            self._streak += 1
            streak = self._streak
        level = log.warning if isinstance(exc, CarnetError) else log.error
        level("background_work_failed", thread=self.thread, error=error_label(exc), in_a_row=streak)

    def backoff(self) -> float:
        """Seconds to wait before the next unit: 0 after a success, then base, 2×base, 4×base… up to the cap."""
        with self._lock:
            streak = self._streak
        if streak == 0:
            return 0.0
        return min(self._max, self._base * 2.0 ** min(streak - 1, 62))
