"""Counting the records reads had to leave out (``carnet_unreadable_records_total`` in ``/metrics``).

Labels are the operation (``list``, ``search``, ``assemble``, ``export``, ``get``, ``lookup``,
``erase``…) and the reason code only: never a tenant, a subject or a record id (those go to the audit
trail, which the facade writes)."""

from __future__ import annotations

import threading
from collections.abc import Iterable

from carnet.domain.unreadable import Unreadable, distinct


class UnreadableTally:
    """Thread-safe counts per (operation, reason), read by the metrics collector at scrape time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[tuple[str, str], int] = {}

    def add(self, operation: str, skipped: Iterable[Unreadable]) -> tuple[Unreadable, ...]:
        """Count what one call skipped (each record once) and return it, distinct and sorted by id."""
        found = distinct(skipped)
        if found:
            with self._lock:
                for u in found:
                    key = (operation, u.reason)
                    self._counts[key] = self._counts.get(key, 0) + 1
        return found

    def counts(self) -> dict[tuple[str, str], int]:
        with self._lock:
            return dict(self._counts)
