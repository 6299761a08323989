"""The in-process scheduler of ``carnet serve`` on the embedded store: maintenance (and backups)
every N hours, in one daemon thread.

The embedded shard has one owner process, so its forgetting must run inside it (DESIGN.md
"Processes and scheduling"); with a Qdrant server, CronJobs or systemd timers run ``carnet maintain``.

- Each job's last run is kept in a small state file (``<data dir>/scheduler.json``): a server that
  restarts more often than the interval still runs every job on time, and one that was down past a
  job's time runs it ``startup_delay`` seconds after it starts (not in the middle of start-up).
- Jobs run one after the other, never two at once. A job that fails, whatever it raises, is logged
  (its error code or exception type, never a message that could carry data), counted
  (``carnet_background_errors_total{thread="scheduler"}``) and retried after a backoff that doubles
  from ``retry_seconds`` up to the job's own interval (``services.resilient``); the thread never dies
  of it and the server never sees it.
- ``stop()`` sets a flag the jobs poll between subjects (``maintain(stop=...)``), then waits for the
  thread a bounded time: shutdown is never held hostage by a long pass.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import structlog

from carnet.services.resilient import Resilient

log = structlog.get_logger(__name__)

StopFlag = Callable[[], bool]


@dataclass(frozen=True, slots=True)
class Job:
    name: str
    every_seconds: float
    run: Callable[[StopFlag], object]  # gets the stop flag to poll


class Scheduler:
    def __init__(self, jobs: Sequence[Job], *, state_file: Path | None = None, startup_delay: float = 300.0,
                 clock: Callable[[], float] = time.time, retry_seconds: float = 60.0) -> None:
        if len({j.name for j in jobs}) != len(jobs):
            raise ValueError("job names must be unique")
        self._jobs = list(jobs)
        self._state_file = state_file
        self._delay = startup_delay
        self._clock = clock
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.runs: dict[str, int] = {j.name: 0 for j in jobs}  # finished runs, failed ones included
        self.failures: dict[str, int] = {j.name: 0 for j in jobs}
        longest = max((j.every_seconds for j in jobs), default=retry_seconds)
        self.guard = Resilient("scheduler", base_seconds=retry_seconds, max_seconds=max(retry_seconds, longest))

    def start(self) -> None:
        if self._thread is None and self._jobs:
            self._stopping.clear()
            self._thread = threading.Thread(target=self._loop, name="carnet-scheduler", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                log.warning("scheduler_stop_timeout", seconds=timeout)
            self._thread = None

    def stopping(self) -> bool:
        return self._stopping.is_set()

    def first_due(self) -> dict[str, float]:
        """When each job first runs: a job's interval after its last run, but not before the
        start-up delay has passed (a job never run, or overdue, runs then)."""
        last = self._load_state()
        now = self._clock()
        return {j.name: max(last.get(j.name, 0.0) + j.every_seconds, now + self._delay) for j in self._jobs}

    def _loop(self) -> None:
        last = self._load_state()
        due = self.first_due()
        while not self._stopping.is_set():
            job = min(self._jobs, key=lambda j: due[j.name])
            if self._stopping.wait(max(0.0, due[job.name] - self._clock())):
                return
            if self._run(job):
                last[job.name] = self._clock()
                due[job.name] = last[job.name] + job.every_seconds
                self._save_state(last)
            else:  # retried sooner than its next time, never later
                due[job.name] = self._clock() + min(job.every_seconds, self.guard.backoff())

    def _run(self, job: Job) -> bool:
        started = time.perf_counter()
        try:
            ok = self.guard.run(lambda: job.run(self.stopping))
        finally:
            self.runs[job.name] += 1
        if ok:
            log.info("scheduled_job_done", job=job.name, seconds=round(time.perf_counter() - started, 3))
        else:
            self.failures[job.name] += 1
            log.warning("scheduled_job_failed", job=job.name, retry_in=min(job.every_seconds, self.guard.backoff()))
        return ok

    def _load_state(self) -> dict[str, float]:
        if self._state_file is None or not self._state_file.exists():
            return {}
        try:
            data = json.loads(self._state_file.read_text(encoding="utf-8"))
            return {str(k): float(v) for k, v in data.items()}
        except (OSError, ValueError, AttributeError, TypeError):
            log.warning("scheduler_state_unreadable")  # runs every job after the start-up delay
            return {}

    def _save_state(self, last: dict[str, float]) -> None:
        if self._state_file is None:
            return
        tmp = self._state_file.with_name(self._state_file.name + ".tmp")
        try:
            with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as f:
                f.write(json.dumps(last))
            tmp.replace(self._state_file)
        except OSError as exc:  # losing it only makes the next start run the jobs earlier
            log.warning("scheduler_state_not_saved", error=type(exc).__name__)
