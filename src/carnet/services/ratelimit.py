"""Per-key request budgets (OWASP API4), in process memory, with the ``limits`` library.

Each API key spends from its own sliding window: the key's own limit when it has one, the
deployment's default otherwise. Budgets are per process; behind a load balancer with N replicas a
key gets up to N times its budget, which the gateway in front should cap (docs/configuration.md)."""

from __future__ import annotations

import functools
import time

from limits import RateLimitItem, parse
from limits.storage import MemoryStorage
from limits.strategies import SlidingWindowCounterRateLimiter

from carnet.domain.reconcile.values import RATE_MESSAGE, check_rate
from carnet.errors import InvalidInput, RateLimited


@functools.lru_cache(maxsize=256)
def parse_rate(text: str) -> RateLimitItem:
    """``"100/second"``, ``"6000 per minute"``…: a positive amount per a positive period
    (``carnet.domain.reconcile.values.check_rate``); refused otherwise, without quoting the value."""
    try:
        return parse(check_rate(text))
    except ValueError:
        raise InvalidInput(RATE_MESSAGE) from None


class RateLimiter:
    def __init__(self, default: str | None) -> None:
        self._default = parse_rate(default) if default else None
        self._limiter = SlidingWindowCounterRateLimiter(MemoryStorage())

    def hit(self, key_id: str, own: str | None = None) -> None:
        """Spend one request of ``key_id``'s budget or raise ``RateLimited`` with the wait."""
        item = parse_rate(own) if own else self._default
        if item is None:
            return
        if not self._limiter.hit(item, key_id):
            stats = self._limiter.get_window_stats(item, key_id)
            raise RateLimited(retry_after=max(0.0, stats.reset_time - time.time()))
