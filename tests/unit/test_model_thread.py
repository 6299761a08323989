"""The model's one thread (adapters/embedders/model_thread.py): every call on it, queries first, a failure
reaching only its caller, and a stopped thread refusing at once instead of leaving a caller waiting."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from carnet.adapters.embedders.model_thread import ModelStopped, ModelThread
from carnet.ports import Embedder


@pytest.fixture
def model() -> Iterator[ModelThread]:
    m = ModelThread("test-model")
    yield m
    m.close()


def _queued(model: ModelThread, n: int) -> None:
    """Wait until ``n`` calls wait in the queue (they are put by other threads)."""
    deadline = time.monotonic() + 5
    while model._queue.qsize() < n:
        assert time.monotonic() < deadline, "calls never reached the queue"
        time.sleep(0.001)


def _hold(started: threading.Event, gate: threading.Event) -> bool:
    """A call that keeps the model thread busy until ``gate`` is set."""
    started.set()
    return gate.wait(5)


def _run_while_blocked(model: ModelThread, priorities: list[bool]) -> list[int]:
    """The order the model thread ran calls 0..n-1 (``priorities[i]``: call i is a query), all queued
    while the thread was busy with an earlier call."""
    gate, started = threading.Event(), threading.Event()
    ran: list[int] = []
    with ThreadPoolExecutor(len(priorities) + 1) as callers:
        blocker = callers.submit(model.run, lambda: _hold(started, gate))
        assert started.wait(5)
        futures = []
        for i, priority in enumerate(priorities):
            futures.append(callers.submit(model.run, lambda i=i: ran.append(i), priority=priority))
            _queued(model, i + 1)  # one at a time: the queue's order is the order asked
        gate.set()
        blocker.result()
        for f in futures:
            f.result()
    return ran


def test_every_call_runs_on_the_one_thread_whoever_asks(model: ModelThread) -> None:
    with ThreadPoolExecutor(8) as callers:
        idents = set(callers.map(lambda _: model.run(threading.get_ident), range(64)))
    assert len(idents) == 1
    assert idents != {threading.get_ident()}
    assert idents == {model._thread.ident}


def test_queries_go_before_the_bulk_work_waiting(model: ModelThread) -> None:
    assert _run_while_blocked(model, [False, False, True, False, True]) == [2, 4, 0, 1, 3]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=8))
def test_the_order_is_queries_then_bulk_each_in_the_order_asked(priorities: list[bool]) -> None:
    model = ModelThread("test-model-order")
    try:
        expected = [i for i, p in enumerate(priorities) if p] + [i for i, p in enumerate(priorities) if not p]
        assert _run_while_blocked(model, priorities) == expected
    finally:
        model.close()


def test_a_failure_reaches_its_caller_and_the_thread_serves_the_next(model: ModelThread) -> None:
    def boom() -> None:
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        model.run(boom)
    assert model.run(lambda: 41 + 1) == 42


def test_a_call_from_the_model_thread_runs_at_once(model: ModelThread) -> None:
    assert model.run(lambda: model.run(lambda: "nested")) == "nested"


def test_after_close_a_call_is_refused_at_once() -> None:
    model = ModelThread("test-model-closed")
    assert model.run(lambda: 1) == 1
    model.close()
    started = time.monotonic()
    with pytest.raises(ModelStopped):
        model.run(lambda: 2)
    assert time.monotonic() - started < 1.0
    model.close()  # twice is harmless


def test_what_was_queued_before_close_still_runs() -> None:
    model = ModelThread("test-model-drain")
    gate, started = threading.Event(), threading.Event()
    with ThreadPoolExecutor(2) as callers:
        blocker = callers.submit(model.run, lambda: _hold(started, gate))
        assert started.wait(5)
        queued = callers.submit(model.run, lambda: "done")
        _queued(model, 1)
        closing = threading.Thread(target=model.close)
        closing.start()
        gate.set()
        closing.join(10)
        blocker.result()
        assert queued.result(timeout=5) == "done"


def test_the_e5_embedder_runs_every_forward_on_its_model_thread(embedder: Embedder,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from carnet.adapters.embedders.e5_fast import E5FastEmbedder

    assert isinstance(embedder, E5FastEmbedder)
    seen: set[int] = set()
    forward = embedder._enc.mean_pooled

    def recorded(seqs: list[list[int]]) -> object:
        seen.add(threading.get_ident())
        return forward(seqs)

    monkeypatch.setattr(embedder._enc, "mean_pooled", recorded)
    with ThreadPoolExecutor(4) as callers:
        vectors = list(callers.map(embedder.embed_query, [f"adresse du membre {i}" for i in range(8)]))
    embedder.embed_passages(["Le membre habite à Lyon.", "Le contrat auto est résilié."])
    assert seen == {embedder._model._thread.ident}
    assert all(v.shape == (embedder.dim,) for v in vectors)
