"""Admission's decisions on a bare ASGI app: the deadline counts from arrival, routes outside
``/api/v1`` pass untouched, refusals carry the REST error shape and ``Retry-After``."""

from __future__ import annotations

import json
import time
from typing import Any

import anyio
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, Counter, Gauge
from starlette.types import Message, Receive, Scope, Send

from carnet.entrypoints.http.admission import Admission, default_slots


def _admission(*, deadline: float = 0.5, slots: int = 1, max_queue: int = 1) -> tuple[Admission, list[str]]:
    ran: list[str] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        ran.append(scope["path"])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    registry = CollectorRegistry()
    gate = Admission(app, slots=slots, max_queue=max_queue, deadline=deadline,
                     refused=Counter("refused", "r", ["route", "reason"], registry=registry),
                     waiting=Gauge("waiting", "w", registry=registry),
                     in_flight=Gauge("in_flight", "i", registry=registry))
    return gate, ran


def _call(gate: Admission, path: str, method: str = "POST", **state: Any) -> list[Message]:
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {"type": "http", "path": path, "method": method, "headers": [], "state": dict(state)}
    anyio.run(gate, scope, receive, send)
    return sent


def test_a_request_past_its_deadline_since_arrival_is_refused_without_running() -> None:
    gate, ran = _admission(deadline=0.5)
    sent = _call(gate, "/api/v1/context/assemble", arrived=time.perf_counter() - 1.0)
    assert ran == []
    start = sent[0]
    assert start["status"] == 503
    headers = dict(start["headers"])
    assert int(headers[b"retry-after"]) >= 1
    assert json.loads(sent[1]["body"])["error"]["code"] == "overloaded"


def test_in_time_and_outside_the_api_requests_run() -> None:
    gate, ran = _admission()
    assert _call(gate, "/api/v1/context/assemble", arrived=time.perf_counter())[0]["status"] == 200
    assert _call(gate, "/api/v1/context/assemble")[0]["status"] == 200  # no stamp: the deadline starts here
    assert _call(gate, "/healthz", arrived=time.perf_counter() - 60)[0]["status"] == 200  # never gated
    # the intake status, a long poll that sleeps on no thread, never holds a slot
    assert _call(gate, "/api/v1/intakes/6f1c", "GET", arrived=time.perf_counter() - 60)[0]["status"] == 200
    assert ran == ["/api/v1/context/assemble", "/api/v1/context/assemble", "/healthz", "/api/v1/intakes/6f1c"]


def test_no_waiting_room_refuses_while_the_slot_is_taken() -> None:
    gate, ran = _admission(slots=1, max_queue=0)
    statuses: list[int] = []

    async def scenario() -> None:
        held = anyio.Event()
        release = anyio.Event()

        async def slow(scope: Scope, receive: Receive, send: Send) -> None:
            held.set()
            await release.wait()
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"{}"})

        gate.app = slow

        async def one() -> None:
            sent: list[Message] = []

            async def receive() -> Message:
                return {"type": "http.request", "body": b"", "more_body": False}

            async def send(message: Message) -> None:
                sent.append(message)

            await gate({"type": "http", "path": "/api/v1/x", "method": "POST", "headers": [], "state": {}},
                       receive, send)
            statuses.append(sent[0]["status"])

        async with anyio.create_task_group() as tg:
            tg.start_soon(one)
            await held.wait()
            await one()  # the slot is taken and nobody may wait: refused at once
            release.set()

    anyio.run(scenario)
    assert statuses == [503, 200]
    assert ran == []


def _requests(gate: Admission, n: int, *, hold: float) -> list[tuple[int, float]]:
    """``n`` requests sent at once to an app that holds each slot ``hold`` seconds: (status, seconds to answer)."""
    out: list[tuple[int, float]] = []

    async def slow(scope: Scope, receive: Receive, send: Send) -> None:
        await anyio.sleep(hold)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    gate.app = slow

    async def one() -> None:
        sent: list[Message] = []
        t0 = time.perf_counter()

        async def receive() -> Message:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: Message) -> None:
            sent.append(message)

        await gate({"type": "http", "path": "/api/v1/x", "method": "POST", "headers": [],
                    "state": {"arrived": t0}}, receive, send)
        out.append((sent[0]["status"], time.perf_counter() - t0))

    async def burst() -> None:
        async with anyio.create_task_group() as tg:
            for _ in range(n):
                tg.start_soon(one)

    anyio.run(burst)
    return out


def test_a_wait_longer_than_the_target_is_refused_at_once_and_the_rest_start_in_time() -> None:
    gate, _ = _admission(slots=2, max_queue=100, deadline=5.0)
    gate._target = 0.48
    assert gate.expected_wait(ahead=10) == 0.0  # nothing served yet: nothing to go by
    first = _requests(gate, 2, hold=0.2)  # teaches it that a request holds its slot about 200 ms
    assert [s for s, _ in first] == [200, 200]
    assert 0.16 < gate.expected_wait(ahead=1) < 0.4  # (1 + 1) × ~200 ms / 2 slots
    outcomes = _requests(gate, 12, hold=0.2)
    served = [t for s, t in outcomes if s == 200]
    refused = [t for s, t in outcomes if s == 503]
    # 2 start at once; then (k + 1) × 100 ms ≤ 480 ms for k = 0…3 waiting: 4 more; the other 6 cannot
    # start within the target and are told so at once, long before the 5 s deadline.
    assert len(served) == 6 and len(refused) == 6
    assert max(refused) < 0.5
    assert max(served) < 1.5  # three holds of 200 ms in turn, far from the deadline


def test_the_target_never_refuses_while_a_slot_is_free() -> None:
    gate, _ = _admission(slots=4, max_queue=0, deadline=5.0)
    gate._target = 0.001
    _requests(gate, 1, hold=0.05)
    assert gate.expected_wait(ahead=0) > gate._target
    assert [s for s, _ in _requests(gate, 4, hold=0.01)] == [200] * 4  # four free slots, four admitted


@given(threads=st.integers(0, 200), cores=st.integers(1, 256))
def test_the_default_is_one_slot_per_core_within_half_the_threads(threads: int, cores: int) -> None:
    n = default_slots(threads=threads, cores=cores)
    assert n >= 1 and n <= cores
    assert n <= threads // 2 or n == 1  # half the pool stays free for the health routes
    assert default_slots(threads=40, cores=2) == 2 and default_slots(threads=40, cores=64) == 20


def test_without_a_setting_the_slots_follow_the_cores(monkeypatch: Any) -> None:
    monkeypatch.setattr("os.cpu_count", lambda: 3)
    gate, _ = _admission(slots=None, max_queue=0)  # type: ignore[arg-type]
    statuses = sorted(s for s, _ in _requests(gate, 4, hold=0.05))
    assert statuses == [200, 200, 200, 503] and gate._slots == 3  # a fourth finds no slot and no waiting room


def test_the_slot_is_free_before_the_answer_is_written_to_a_client_that_does_not_read() -> None:
    """The first client's writes block (it reads nothing); a second request is admitted and answered
    meanwhile: the first one's slot was given back once its answer was whole (issue 46, finding 4)."""
    gate, ran = _admission(slots=1, max_queue=0)
    stuck, second_done = anyio.Event(), anyio.Event()

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def never_drains(message: Message) -> None:
        stuck.set()
        await second_done.wait()  # the client reads again only once the second request is answered

    async def main() -> list[Message]:
        second: list[Message] = []

        async def record(message: Message) -> None:
            second.append(message)

        scope: dict[str, Any] = {"type": "http", "path": "/api/v1/context/assemble", "method": "POST",
                                 "headers": [], "state": {}}
        async with anyio.create_task_group() as tg:
            tg.start_soon(gate, dict(scope), receive, never_drains)
            with anyio.fail_after(5):
                await stuck.wait()
                await gate(dict(scope), receive, record)
            second_done.set()
        return second

    second = anyio.run(main)
    assert second[0]["status"] == 200 and len(ran) == 2
