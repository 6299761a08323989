"""Refused unauthenticated requests, audited in aggregate: one entry per source and window.

A request without a valid key is answered 401 (or 429 once its address spent its budget) without
writing anything per request: the refusal is counted here, and when its window closes each source
gets one ``access.denied`` entry in the ``_system`` chain carrying the count. A flood of N refusals
thus costs at most ``max_sources + 1`` entries per window, whatever N is.

The source is never the address: it is a keyed hash (HMAC-SHA256 under the API-key pepper, 16 hex
digits) of the budget key (the IPv4 address, or the IPv6 /64). Entries of one source correlate
across windows, and whoever holds the pepper can check whether a given address is the source, but
the trail alone names no one. Past ``max_sources`` distinct sources in one window, the rest are
counted together under the source ``"other"``.

Closed windows are written by ``tick``, which the HTTP gate calls at every request, and by
``close`` at shutdown (which also writes the open window); the entries go through the audit
trail's read queue, appended in batches.
"""

from __future__ import annotations

import hashlib
import hmac
import threading
from dataclasses import dataclass
from datetime import UTC, datetime

from carnet.ports import Clock
from carnet.services.audit import SYSTEM_CHAIN, AuditTrail

OTHER = "other"
_HASH_CONTEXT = b"carnet/refused-source\x00"


@dataclass(slots=True)
class _Count:
    refused: int = 0
    rate_limited: int = 0


class RefusalTally:
    def __init__(self, audit: AuditTrail, clock: Clock, *, pepper: bytes, window_seconds: int = 60,
                 max_sources: int = 1000) -> None:
        self._audit, self._clock, self._pepper = audit, clock, pepper
        self.window_seconds = window_seconds
        self.max_sources = max_sources
        self._lock = threading.Lock()
        self._window: int | None = None  # the open window's start, in epoch seconds
        self._counts: dict[str, _Count] = {}

    def source_of(self, budget_key: str) -> str:
        return hmac.new(self._pepper, _HASH_CONTEXT + budget_key.encode(), hashlib.sha256).hexdigest()[:16]

    def _start(self) -> int:
        now = int(self._clock.now().timestamp())
        return now - now % self.window_seconds

    def note(self, budget_key: str, *, rate_limited: bool) -> None:
        """Count one refused request from ``budget_key`` (see ``carnet.entrypoints.http.client_address``)."""
        start = self._start()
        with self._lock:
            closed = self._roll(start)
            source = self.source_of(budget_key)
            if source not in self._counts and len(self._counts) >= self.max_sources:
                source = OTHER
            count = self._counts.setdefault(source, _Count())
            count.refused += 1
            count.rate_limited += rate_limited
        self._write(*closed)

    def tick(self) -> None:
        """Write the entries of a window that has closed (cheap when none has)."""
        start = self._start()
        if self._window is None or self._window == start:
            return
        with self._lock:
            closed = self._roll(start)
        self._write(*closed)

    def close(self) -> None:
        """Write everything counted so far, the open window included."""
        with self._lock:
            closed = self._roll(None)
        self._write(*closed)

    def _roll(self, start: int | None) -> tuple[int | None, dict[str, _Count]]:
        if self._window == start:
            return None, {}
        closed = (self._window, self._counts)
        self._window, self._counts = start, {}
        return closed

    def _write(self, window: int | None, counts: dict[str, _Count]) -> None:
        if window is None:
            return
        started = datetime.fromtimestamp(window, UTC).isoformat()
        for source, count in counts.items():
            self._audit.read(self._audit.event(
                tenant=SYSTEM_CHAIN, actor="anonymous", action="access.denied", outcome="denied",
                detail={"code": "unauthenticated", "source": source, "count": count.refused,
                        "rate_limited": count.rate_limited, "window_start": started,
                        "window_seconds": self.window_seconds}))
