"""A circuit breaker: after ``failures`` calls in a row fail, calls are refused at once for
``reset_seconds``; then one trial call goes through (half open) while the others are still refused,
and its outcome closes the circuit or opens it again.

A remote embedder that is down must not hold every request thread for a timeout and its retries:
once the breaker is open, a question is answered ``503 embedder_unavailable`` in microseconds, with
the time left before the next trial as ``Retry-After``. Kept in-house (sixty lines, no state shared
between processes, the time read from an injectable clock so tests need no sleep).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from enum import StrEnum


class BreakerState(StrEnum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


class CircuitOpen(Exception):
    """The call was refused without being tried; ``retry_after``: seconds until the next trial."""

    def __init__(self, retry_after: float) -> None:
        super().__init__(f"circuit open, next trial in {retry_after:.1f} s")
        self.retry_after = retry_after


class CircuitBreaker:
    def __init__(self, *, failures: int, reset_seconds: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if failures < 1 or reset_seconds <= 0:
            raise ValueError("failures must be at least 1 and reset_seconds positive")
        self.failures, self.reset_seconds, self._clock = failures, reset_seconds, clock
        self._lock = threading.Lock()
        self._failed = 0  # consecutive failures while closed
        self._opened_at: float | None = None
        self._trial = False  # a half-open trial is in flight

    @property
    def state(self) -> BreakerState:
        with self._lock:
            if self._opened_at is None:
                return BreakerState.CLOSED
            if self._trial or self._clock() - self._opened_at >= self.reset_seconds:
                return BreakerState.HALF_OPEN
            return BreakerState.OPEN

    def before(self) -> None:
        """Called before a call: returns if it may go, raises ``CircuitOpen`` otherwise."""
        with self._lock:
            if self._opened_at is None:
                return
            left = self._opened_at + self.reset_seconds - self._clock()
            if left > 0 or self._trial:
                raise CircuitOpen(max(left, 0.0) or self.reset_seconds)
            self._trial = True  # this call is the trial; the others wait for its outcome

    def succeeded(self) -> None:
        with self._lock:
            self._failed, self._opened_at, self._trial = 0, None, False

    def failed(self) -> None:
        with self._lock:
            self._failed += 1
            if self._trial or self._failed >= self.failures:
                self._opened_at, self._trial = self._clock(), False

    def retry_after(self) -> float:
        """Seconds until the next trial (0 when closed)."""
        with self._lock:
            if self._opened_at is None:
                return 0.0
            return max(self._opened_at + self.reset_seconds - self._clock(), 0.0)
