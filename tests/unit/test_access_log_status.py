"""The access log's status: what was sent, 500 for a request that raised, 499 for one that sent no answer."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, Histogram
from starlette.types import Message, Receive, Scope, Send

from carnet.entrypoints.http.access_log import NO_ANSWER, AccessLog


def _logged(app: Any) -> tuple[list[str], type[BaseException] | None]:
    registry = CollectorRegistry()
    histogram = Histogram("t_seconds", "t", ["method", "route", "status"], registry=registry)
    scope: dict[str, Any] = {"type": "http", "method": "GET", "path": "/x"}

    async def receive() -> Message:
        return {"type": "http.request", "body": b""}

    async def send(message: Message) -> None:
        return None

    raised: type[BaseException] | None = None
    try:
        asyncio.run(AccessLog(app, observe=histogram)(scope, receive, send))
    except BaseException as exc:  # what the application raised is part of what is checked
        raised = type(exc)
    statuses = [s.labels["status"] for m in registry.collect() for s in m.samples if s.name == "t_seconds_count"]
    return statuses, raised


async def _answers(scope: Scope, receive: Receive, send: Send) -> None:
    await send({"type": "http.response.start", "status": 204, "headers": []})
    await send({"type": "http.response.body", "body": b""})


async def _raises(scope: Scope, receive: Receive, send: Send) -> None:
    raise RuntimeError("a bug")


async def _cancelled(scope: Scope, receive: Receive, send: Send) -> None:
    raise asyncio.CancelledError


async def _returns_without_answer(scope: Scope, receive: Receive, send: Send) -> None:
    return None


async def _cancelled_after_start(scope: Scope, receive: Receive, send: Send) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    raise asyncio.CancelledError


@pytest.mark.parametrize(("app", "status", "raised"), [
    (_answers, "204", None),
    (_raises, "500", RuntimeError),
    (_cancelled, str(NO_ANSWER), asyncio.CancelledError),
    (_returns_without_answer, str(NO_ANSWER), None),
    (_cancelled_after_start, "200", asyncio.CancelledError),
])
def test_the_status_logged_is_what_the_client_got(app: Any, status: str, raised: type[BaseException] | None) -> None:
    assert _logged(app) == ([status], raised)
