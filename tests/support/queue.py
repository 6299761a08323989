"""Waiting for an intake queue to empty (polled, with a deadline: no fixed sleep)."""

from __future__ import annotations

import time

from carnet.ports import IntakeStore


def wait_drained(store: IntakeStore, *, timeout: float, poll: float = 0.05) -> bool:
    """True once nothing is pending or processing; False if ``timeout`` seconds pass first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s = store.stats()
        if s.pending == 0 and s.processing == 0:
            return True
        time.sleep(poll)
    return False
