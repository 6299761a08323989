"""Every background thread survives any exception: its work raises something unexpected once, the
thread logs it (type only), counts it (carnet_background_errors_total{thread}), backs off and does
the next unit of work; what the failed unit held is retried, not lost."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, cast

import pytest
from prometheus_client import CollectorRegistry

from carnet.domain.audit import AuditEntry, AuditEvent
from carnet.domain.records import Scope
from carnet.metrics import Metrics
from carnet.ports import AccessUpdate, AuditLog, VectorIndex
from carnet.services.audit import AuditTrail
from carnet.services.intake.worker import Worker, WorkerPool
from carnet.services.lifecycle.scheduler import Job, Scheduler, StopFlag
from carnet.services.locks import SubjectLocks
from carnet.services.memories.access import AccessRecorder
from carnet.services.resilient import Resilient

NOW = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
SCOPE = Scope("acme", "h" * 16)


def eventually(condition: Callable[[], bool], seconds: float = 10.0) -> bool:
    """Poll ``condition`` until it holds or the deadline passes."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.005)
    return condition()


def counter(errors: Callable[[], int], thread: str) -> Callable[[], float | None]:
    """The exported metric, as /metrics shows it."""
    metrics = Metrics(CollectorRegistry())
    metrics.watch_background(thread, errors)
    return lambda: metrics.registry.get_sample_value("carnet_background_errors_total", {"thread": thread})


class Once:
    """Raises ``RuntimeError`` (a bug, not a CarnetError) on the first call only."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> None:
        self.calls += 1
        if self.calls == 1:
            raise RuntimeError("unexpected: nobody planned for this")


class FlakyIndex:
    def __init__(self) -> None:
        self.fail = Once()
        self.written: list[AccessUpdate] = []

    def record_access(self, scope: Scope, updates: Sequence[AccessUpdate]) -> None:
        self.fail()
        self.written.extend(updates)


def test_the_access_recorder_survives_and_retries_the_failed_batch() -> None:
    index = FlakyIndex()
    recorder = AccessRecorder(index=cast(VectorIndex, index), locks=SubjectLocks(), interval=0.01)
    exported = counter(lambda: recorder.guard.errors, "access")
    recorder.record(SCOPE, ["m1", "m2"], NOW)
    recorder.start()
    try:
        assert eventually(lambda: recorder.guard.errors == 1)
        recorder.record(SCOPE, ["m2", "m3"], NOW)
        assert eventually(lambda: {u.memory_id for u in index.written} == {"m1", "m2", "m3"})
    finally:
        recorder.stop()
    assert {u.memory_id: u.count_delta for u in index.written} == {"m1": 1, "m2": 2, "m3": 1}
    assert exported() == 1 and recorder.dropped == 0 and recorder.pending() == 0


def test_the_access_recorder_drops_a_batch_that_always_fails_after_its_attempts() -> None:
    class Broken:
        def record_access(self, scope: Scope, updates: Sequence[AccessUpdate]) -> None:
            raise ValueError("poison")

    recorder = AccessRecorder(index=cast(VectorIndex, Broken()), locks=SubjectLocks(), max_attempts=3)
    recorder.record(SCOPE, ["m1", "m2"], NOW)
    for _ in range(3):
        assert not recorder.guard.run(recorder.flush)
    assert recorder.dropped == 2 and recorder.pending() == 0 and recorder.guard.errors == 3


class FlakyLog:
    def __init__(self) -> None:
        self.fail = Once()
        self.appended: list[AuditEvent] = []

    def append(self, events: Sequence[AuditEvent]) -> list[AuditEntry]:
        self.fail()
        self.appended.extend(events)
        return []


def test_the_audit_batcher_survives_and_keeps_the_batch() -> None:
    log = FlakyLog()
    trail = AuditTrail(cast(AuditLog, log), cast(Any, None), interval=0.01)
    exported = counter(lambda: trail.guard.errors, "audit")

    def read(n: int) -> AuditEvent:
        return AuditEvent(tenant="acme", actor="k1", action="memory.search", at=NOW, subject=None,
                          targets=(f"m{n}",), outcome="ok", detail={})

    trail.read(read(1))
    trail.start()
    try:
        assert eventually(lambda: trail.guard.errors == 1)
        trail.read(read(2))
        assert eventually(lambda: [e.targets for e in log.appended] == [("m1",), ("m2",)])
    finally:
        trail.stop()
    assert exported() == 1 and trail.pending() == 0


def test_the_scheduler_retries_a_failed_job_with_backoff_not_at_its_next_interval() -> None:
    fail = Once()
    done = threading.Event()

    def job(_stop: StopFlag) -> None:
        fail()
        done.set()

    s = Scheduler([Job("maintain", 3600, job)], startup_delay=0, retry_seconds=0.01)
    exported = counter(lambda: s.guard.errors, "scheduler")
    s.start()
    try:
        assert done.wait(10), "the job was not retried after its failure"
    finally:
        s.stop()
    assert s.failures["maintain"] == 1 and s.runs["maintain"] == 2 and exported() == 1


class FlakyWorker:
    """What the pool needs of a Worker: a pass that raises once, then does its work."""

    def __init__(self) -> None:
        self.fail = Once()
        self.passes = 0
        self.guard = Resilient("lease")
        self.owner = "test:0"

    def run_once(self, *, limit: int = 1) -> int:
        self.fail()
        self.passes += 1
        return 0


def test_an_intake_worker_thread_survives_an_unexpected_exception() -> None:
    worker = FlakyWorker()
    pool = WorkerPool(lambda _n: cast(Worker, worker), threads=1, poll_seconds=0.01)
    exported = counter(pool.errors, "worker")
    pool.start()
    try:
        assert eventually(lambda: worker.passes >= 2)
    finally:
        pool.stop()
    assert worker.fail.calls >= 3 and exported() == 1


def test_backoff_doubles_up_to_its_cap_and_resets_on_success() -> None:
    guard = Resilient("t", base_seconds=1, max_seconds=5)
    boom = Once()
    assert guard.backoff() == 0
    delays = []
    for _ in range(5):
        guard.run(lambda: 1 / 0)
        delays.append(guard.backoff())
    assert delays == [1, 2, 4, 5, 5] and guard.errors == 5
    assert guard.run(boom) is False and guard.run(boom) is True and guard.backoff() == 0


def test_the_log_line_names_the_type_never_the_message(capsys: pytest.CaptureFixture[str]) -> None:
    guard = Resilient("access")

    def leak() -> None:
        raise KeyError("Jean-Baptiste Lefèvre 06 12 34 56 78")

    assert not guard.run(leak)
    err = capsys.readouterr().err
    assert "KeyError" in err and "Lefèvre" not in err and "06 12" not in err


def test_a_paced_flush_writes_in_slices_with_pauses_and_holds_only_what_it_could_not_write() -> None:
    from carnet.services.memories import access

    class SecondSliceFailsOnce:
        def __init__(self) -> None:
            self.calls: list[list[str]] = []
            self.failed = False

        def record_access(self, scope: Scope, updates: Sequence[AccessUpdate]) -> None:
            if len(self.calls) == 1 and not self.failed:
                self.failed = True
                raise ValueError("flaky")
            self.calls.append([u.memory_id for u in updates])

    index = SecondSliceFailsOnce()
    recorder = AccessRecorder(index=cast(VectorIndex, index), locks=SubjectLocks())
    ids = [f"m{i}" for i in range(3 * access.SLICE + 5)]  # four slices
    recorder.record(SCOPE, ids, NOW)
    began = time.perf_counter()
    assert not recorder.guard.run(lambda: recorder.flush(paced=True))
    assert time.perf_counter() - began >= 2 * access.PAUSE  # a pause after each slice tried
    assert index.calls == [ids[:access.SLICE]]  # the first slice written, the second failed
    assert recorder.pending() == len(ids) - access.SLICE  # held: what was not written, nothing twice
    recorder.flush(paced=True)
    assert [len(c) for c in index.calls] == [access.SLICE] * 3 + [5]
    assert sorted(i for c in index.calls for i in c) == sorted(ids) and recorder.pending() == 0
    recorder.record(SCOPE, ids, NOW)
    recorder.flush()  # unpaced (at shutdown): one write per scope
    assert index.calls[-1] == ids


def test_stopping_during_a_paced_flush_writes_the_rest_without_pauses() -> None:
    from carnet.services.memories import access

    written: list[str] = []
    started = threading.Event()

    class SlowIndex:
        def record_access(self, scope: Scope, updates: Sequence[AccessUpdate]) -> None:
            started.set()
            time.sleep(0.01)  # each slice takes 10 ms; paced, each is followed by as long a pause
            written.extend(u.memory_id for u in updates)

    recorder = AccessRecorder(index=cast(VectorIndex, SlowIndex()), locks=SubjectLocks(), interval=0.01)
    ids = [f"m{i}" for i in range(50 * access.SLICE)]  # 50 slices: about 1 s paced
    recorder.record(SCOPE, ids, NOW)
    recorder.start()
    assert started.wait(5)
    began = time.perf_counter()
    recorder.stop()
    assert time.perf_counter() - began < 0.85  # the rest went without pauses (49 × 10 ms)
    assert sorted(written) == sorted(ids) and recorder.pending() == 0
