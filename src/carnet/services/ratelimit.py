"""Per-key request budgets (OWASP API4), in process memory: a sliding window counter per key.

Each API key spends from its own window: the key's own limit when it has one, the deployment's
default otherwise. Budgets are per process; behind a load balancer with N replicas a key gets up to N
times its budget, which the gateway in front should cap (docs/configuration.md).

The counting is the ``limits`` library's sliding window counter (a key's count in the current fixed
window plus its count in the previous one, weighted by how much of that window still overlaps the
last period); rates are parsed by ``limits`` too. The counters are kept here rather than in
``limits``' ``MemoryStorage``, which starts a timer thread to expire its entries whenever the last one
has ended (one every 10 ms under traffic): on the event loop that cost 0.26 ms median per request
after a pause of 20 ms (docs/benchmarks.md, "The sequential path"). Here the expired counters of all
keys are dropped inline, every ``SWEEP_EVERY`` hits, under the same lock."""

from __future__ import annotations

import functools
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from limits import RateLimitItem, parse

from carnet.domain.reconcile.values import RATE_MESSAGE, check_rate
from carnet.errors import InvalidInput, RateLimited

SWEEP_EVERY = 1024  # hits between two passes dropping the counters whose windows are over


@functools.lru_cache(maxsize=256)
def parse_rate(text: str) -> RateLimitItem:
    """``"100/second"``, ``"6000 per minute"``…: a positive amount per a positive period
    (``carnet.domain.reconcile.values.check_rate``); refused otherwise, without quoting the value."""
    try:
        return parse(check_rate(text))
    except ValueError:
        raise InvalidInput(RATE_MESSAGE) from None


@dataclass
class _Window:
    index: int  # which fixed window of the period ``current`` counts
    previous: int = 0
    current: int = 0


def wait_before_next(amount: int, period: float, previous: int, current: int, left: float) -> float:
    """Seconds until one more request fits: the previous window's weighted share shrinks as the
    current window goes on (``left``: what remains of it), and once it is over the current count
    becomes the previous one."""
    room = amount - 1 - current
    if room >= 0:
        return max(0.0, left - room * period / previous) if previous else 0.0
    return left + period * (1 - (amount - 1) / current)


class RateLimiter:
    def __init__(self, default: str | None, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._default = parse_rate(default) if default else None
        self._clock = clock
        self._windows: dict[tuple[str, int, float], _Window] = {}
        self._lock = threading.Lock()
        self._hits = 0

    def hit(self, key_id: str, own: str | None = None) -> None:
        """Spend one request of ``key_id``'s budget or raise ``RateLimited`` with the wait."""
        item = parse_rate(own) if own else self._default
        if item is None:
            return
        amount, period = item.amount, float(item.get_expiry())
        now = self._clock()
        index = math.floor(now / period)
        left = (index + 1) * period - now
        with self._lock:
            w = self._advance(self._windows.setdefault((key_id, amount, period), _Window(index)), index)
            if w.previous * left / period + w.current + 1 > amount:
                wait = wait_before_next(amount, period, w.previous, w.current, left)
            else:
                w.current += 1
                wait = None
            self._hits += 1
            if self._hits % SWEEP_EVERY == 0:
                self._sweep(now)
        if wait is not None:
            raise RateLimited(retry_after=wait)

    @staticmethod
    def _advance(w: _Window, index: int) -> _Window:
        if index > w.index:
            w.previous = w.current if index == w.index + 1 else 0
            w.current, w.index = 0, index
        return w

    def _sweep(self, now: float) -> None:
        """Drop the counters that no longer count: their previous window is over too."""
        over = [k for k, w in self._windows.items() if math.floor(now / k[2]) > w.index + 1]
        for k in over:
            del self._windows[k]

    def tracked(self) -> int:
        """Counters held (the tests read it: swept ones are gone)."""
        return len(self._windows)
