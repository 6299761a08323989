"""Admission's decisions on a bare ASGI app: the deadline counts from arrival, routes outside
``/api/v1`` pass untouched, refusals carry the REST error shape and ``Retry-After``."""

from __future__ import annotations

import json
import time
from typing import Any

import anyio
from prometheus_client import CollectorRegistry, Counter, Gauge
from starlette.types import Message, Receive, Scope, Send

from carnet.entrypoints.http.admission import Admission


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
