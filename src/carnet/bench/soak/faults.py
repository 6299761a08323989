"""The faults, their schedule, and the windows they declare.

Each fault touches one part of the topology and brings it back: ``kill-worker`` (kill -9 a worker,
start it again), ``kill-api`` (kill -9 an API process, start it again on its port), ``kms-freeze``
(SIGSTOP OpenBao for 10 s: connections open, no answer), ``pg-restart`` (PostgreSQL stopped at once,
every connection cut, then started), ``qdrant-restart`` (the Qdrant test server stopped and started
on the same data). A fault's window is declared from the moment it starts to ``SETTLE_S`` after the
part is back: a request that overlaps it is "in a fault window" (for ``kill-api``, a request sent
to that API: the other one must go on answering); a 5xx outside every window is a failure. The
other parts' pids are compared before and after: recovery must need no restart of them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from carnet.bench.report import progress
from carnet.bench.soak.stack import Topology

FAULTS = ("kill-worker", "kill-api", "kms-freeze", "pg-restart", "qdrant-restart")
KMS_FREEZE_S = 10.0
SETTLE_S = 5.0  # pools reconnecting, a request started before the part came back finishing


@dataclass
class Window:
    fault: str
    start: float  # seconds since the run started
    end: float = float("inf")  # until it is closed
    recovered_s: float | None = None  # from the part back to a successful round trip through every API
    others_restarted: list[str] = field(default_factory=list)
    error: str | None = None
    restarts: int = 0  # a killed part started again by its supervisor after a failed start
    api: int | None = None  # kill-api: only the requests sent to that API are in its window

    def overlaps(self, t0: float, t1: float, api: int) -> bool:
        return t0 <= self.end and t1 >= self.start and self.api in (None, api)

    def as_dict(self) -> dict[str, Any]:
        return {"fault": self.fault, "start_s": round(self.start, 1), "end_s": round(self.end, 1),
                "recovered_s": None if self.recovered_s is None else round(self.recovered_s, 1),
                "others_restarted": self.others_restarted, "error": self.error,
                "restarts": self.restarts,
                **({"api": self.api} if self.api is not None else {})}


def schedule(seconds: float, faults: Sequence[str]) -> list[tuple[float, str]]:
    """When each fault starts: spread over the first 80% of the run after a 10% warm-up (the last
    20% shows recovery); the list is repeated once per 5 minutes of run."""
    rounds = max(1, int(seconds // 300))
    planned = [f for _ in range(rounds) for f in faults]
    return [(seconds * (0.1 + 0.7 * i / len(planned)), f) for i, f in enumerate(planned)] if planned else []


def _kill_worker(topology: Topology, n: int) -> tuple[str, Callable[[], int | None] | None]:
    part = topology.worker_parts[n % len(topology.worker_parts)]
    part.kill()
    part.spawn()
    return part.name, part.wait_ready_supervised


def _kill_api(topology: Topology, n: int) -> tuple[str, Callable[[], int | None] | None]:
    """Killed and started again at once; it is back when it answers (``wait_ready``, which under load
    takes minutes: the schedule goes on meanwhile, the round robin sends to the other API)."""
    part = topology.api_parts[n % len(topology.api_parts)]
    part.kill()
    part.spawn()
    return part.name, part.wait_ready_supervised


def _kms_freeze(topology: Topology, n: int) -> tuple[str, Callable[[], int | None] | None]:
    topology.bao.freeze()
    try:
        time.sleep(KMS_FREEZE_S)  # the fault's length, not a wait for readiness
    finally:
        topology.bao.thaw()
    return "openbao", None


def _pg_restart(topology: Topology, n: int) -> tuple[str, Callable[[], int | None] | None]:
    topology.postgres.restart()
    return "postgres", None


def _qdrant_restart(topology: Topology, n: int) -> tuple[str, Callable[[], int | None] | None]:
    topology.qdrant.stop()
    topology.qdrant.start()
    return "qdrant", None


_INJECT: dict[str, Callable[[Topology, int], tuple[str, Callable[[], int | None] | None]]] = {
    "kill-worker": _kill_worker, "kill-api": _kill_api, "kms-freeze": _kms_freeze, "pg-restart": _pg_restart,
    "qdrant-restart": _qdrant_restart}


class Injector(threading.Thread):
    """Injects the schedule's faults one after another (a late one waits for the one before), each
    followed by ``probe`` (a write and a read through every API that is up) until it succeeds: its
    recovery time. A part that must come up again (an API) is waited for in a thread of its own."""

    def __init__(self, topology: Topology, planned: list[tuple[float, str]], *, started: float,
                 probe: Callable[[], bool], recovery_deadline_s: float = 600.0) -> None:
        super().__init__(name="soak-faults", daemon=True)
        self._topology, self._planned, self._t0, self._probe = topology, planned, started, probe
        self._deadline = recovery_deadline_s
        self.windows: list[Window] = []
        self._touched: list[str] = []  # every part a fault restarted: not "another" part for any fault
        self._waiters: list[threading.Thread] = []
        self._lock = threading.Lock()

    def now(self) -> float:
        return time.monotonic() - self._t0

    def snapshot(self) -> list[Window]:
        with self._lock:
            return list(self.windows)

    def run(self) -> None:
        for n, (at, fault) in enumerate(self._planned):
            time.sleep(max(0.0, at - self.now()))  # the schedule: faults are injected at set times
            window = Window(fault, self.now())
            with self._lock:
                self.windows.append(window)
            before = self._topology.pids()
            progress(f"soak: {window.start:.0f} s {fault}")
            if fault == "kill-api":
                window.api = n % len(self._topology.api_parts)
            try:
                touched, coming_back = _INJECT[fault](self._topology, n)
                self._touched.append(touched)
            except Exception as exc:  # a fault that could not be injected or undone is reported, not raised
                window.error = f"{type(exc).__name__}: {exc}"
                coming_back = None
            if coming_back is None:
                self._close(window, before, coming_back)
            else:
                waiter = threading.Thread(target=self._close, args=(window, before, coming_back), daemon=True)
                self._waiters.append(waiter)
                waiter.start()
        for waiter in self._waiters:
            waiter.join()

    def _close(self, window: Window, before: dict[str, int | None],
               coming_back: Callable[[], int | None] | None) -> None:
        if coming_back is not None:
            try:
                window.restarts = coming_back() or 0
            except Exception as exc:  # reported with the window
                window.error = f"{type(exc).__name__}: {exc}"
        back = self.now()
        window.recovered_s = self._recover(back)
        after = self._topology.pids()
        window.others_restarted = sorted(name for name, pid in before.items()
                                         if name not in self._touched and after.get(name) != pid)
        window.end = self.now() + SETTLE_S
        progress(f"soak: {window.fault} recovered {window.recovered_s} s after it was back")

    def _recover(self, back: float) -> float | None:
        while self.now() - back < self._deadline:
            if self._probe():
                return self.now() - back
            time.sleep(0.5)  # between probes
        return None
