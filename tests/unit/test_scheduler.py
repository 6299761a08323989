"""The in-process scheduler: runs its jobs, survives their failures, remembers their last run, stops."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from carnet.errors import DependencyUnavailable
from carnet.services.lifecycle.scheduler import Job, Scheduler, StopFlag


def wait_for(condition: threading.Event, seconds: float = 10.0) -> bool:
    return condition.wait(seconds)


def test_runs_jobs_again_after_failures_and_stops(tmp_path: Path) -> None:
    calls: list[str] = []
    third = threading.Event()

    def flaky(stop: StopFlag) -> None:
        calls.append("flaky")
        if len(calls) >= 3:
            third.set()
        if len(calls) == 1:
            raise DependencyUnavailable("store down")
        if len(calls) == 2:
            raise RuntimeError("unexpected")

    state = tmp_path / "scheduler.json"
    s = Scheduler([Job("flaky", 0.01, flaky)], state_file=state, startup_delay=0)
    s.start()
    assert wait_for(third)
    started = time.perf_counter()
    s.stop()
    assert time.perf_counter() - started < 5
    assert s.failures["flaky"] == 2 and s.runs["flaky"] >= 3
    assert set(json.loads(state.read_text())) == {"flaky"}


def test_stop_reaches_a_running_job_through_its_flag() -> None:
    entered, left = threading.Event(), threading.Event()

    def long_pass(stop: StopFlag) -> None:
        entered.set()
        deadline = time.monotonic() + 30
        while not stop() and time.monotonic() < deadline:
            time.sleep(0.005)  # a pass polls its flag between subjects
        left.set()

    s = Scheduler([Job("maintain", 3600, long_pass)], startup_delay=0)
    s.start()
    assert wait_for(entered)
    s.stop()
    assert left.is_set()


def test_a_recent_run_is_not_repeated_at_start_and_an_overdue_one_waits_for_the_startup_delay(tmp_path: Path) -> None:
    state = tmp_path / "scheduler.json"
    now = 1_000_000.0
    state.write_text(json.dumps({"recent": now - 60, "overdue": now - 7200}))
    s = Scheduler([Job("recent", 3600, lambda _s: None), Job("overdue", 3600, lambda _s: None),
                   Job("never", 3600, lambda _s: None)], state_file=state, startup_delay=300, clock=lambda: now)
    due = s.first_due()
    assert due == {"recent": now - 60 + 3600, "overdue": now + 300, "never": now + 300}
    state.write_text("not json")
    assert set(s.first_due().values()) == {now + 300}


def test_no_job_no_thread() -> None:
    s = Scheduler([])
    s.start()
    s.stop()
