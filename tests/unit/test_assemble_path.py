"""Assemble's own ASGI path: it answers only a request FastAPI would hand the route as valid, with the
route's answer; anything else reaches the app behind it with the body as sent; a facade error is
answered by the app's ``CarnetError`` handler (the same body and status)."""

from __future__ import annotations

import json
from typing import Any, cast

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.types import Message, Receive, Scope, Send

from carnet.entrypoints.http.assemble_path import AssemblePath, route_of
from carnet.entrypoints.http.routes_context import PATH, router
from carnet.entrypoints.mcp.auth import STATE_KEY
from carnet.errors import CarnetError, Forbidden, InvalidBudget
from carnet.services.apikeys import Principal
from carnet.services.facade import Facade
from carnet.services.memories.assemble import Context

WHO = Principal(key_id="k1", tenant="t1", roles=("agent",))
VALID = {"subject_id": "ADH-0042", "query": "Le membre appelle pour son sinistre"}


class _Facade:
    """The two facade methods the route calls; ``fails`` raised by ``assemble`` when set."""

    def __init__(self, fails: CarnetError | None = None) -> None:
        self.calls: list[dict[str, Any]] = []
        self.fails = fails

    def budgets(self, overrides: dict[str, Any]) -> dict[str, Any]:
        return {"overrides": overrides}

    def assemble(self, who: Principal, **kwargs: Any) -> Context:
        self.calls.append({"who": who, **kwargs})
        if self.fails is not None:
            raise self.fails
        return Context(memories=[], episodes=[], procedures=[], prompt=f"about {kwargs['subject_id']}",
                       stats={"candidates": 0})


def _call(facade: _Facade, body: bytes, *, method: str = "POST", path: str = PATH,
          content_type: bytes | None = b"application/json", who: object = WHO,
          scope: dict[str, Any] | None = None) -> tuple[list[Message], list[bytes]]:
    """The messages sent, and the bodies the app behind received (empty: it was not called); ``scope``
    is filled with the request's scope as the middleware left it."""
    behind: list[bytes] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        behind.append((await receive()).get("body", b""))
        await send({"type": "http.response.start", "status": 418, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    headers = [(b"content-type", content_type)] if content_type is not None else []
    scope = {} if scope is None else scope
    scope.update({"type": "http", "method": method, "path": path, "headers": headers, "state": {STATE_KEY: who},
                  "query_string": b"", "app": None})
    anyio.run(AssemblePath(app, facade=cast(Facade, facade), route=route_of(router)), scope, receive, send)
    return sent, behind


def test_a_valid_request_is_answered_here_with_the_routes_answer() -> None:
    facade, scope = _Facade(), dict[str, Any]()
    sent, behind = _call(facade, json.dumps({**VALID, "budgets": {"max_memories": 3}}).encode(), scope=scope)
    assert scope["route"].path == PATH  # what the access log and the metrics name
    assert behind == [] and sent[0]["status"] == 200 and (b"content-type", b"application/json") in sent[0]["headers"]
    answer = json.loads(sent[1]["body"])
    assert answer["prompt"] == "about ADH-0042" and answer["memories"] == []
    assert facade.calls[0]["who"] == WHO and facade.calls[0]["subject_id"] == "ADH-0042"
    assert facade.calls[0]["budget"]["overrides"]["max_memories"] == 3


@settings(max_examples=40, deadline=None)
@given(body=st.one_of(
    st.just(b"{not json"), st.just(b"\xff\xfe"), st.just(b"[]"), st.just(b"NaN"),
    st.just(json.dumps({**VALID, "unknown": 1}).encode()),
    st.just(json.dumps({"subject_id": "ADH-0042"}).encode()),
    st.just(json.dumps({**VALID, "subject_id": 42}).encode()),
    st.binary(max_size=40)))
def test_a_body_the_route_must_refuse_goes_on_as_sent(body: bytes) -> None:
    facade = _Facade()
    sent, behind = _call(facade, body)
    assert behind == [body] and sent[0]["status"] == 418 and facade.calls == []


def test_what_is_not_a_valid_json_post_with_a_principal_goes_on() -> None:
    valid = json.dumps(VALID).encode()
    for kwargs in ({"content_type": None}, {"content_type": b"text/plain"}, {"who": None}, {"method": "PUT"},
                   {"path": PATH + "/"}):
        facade = _Facade()
        sent, behind = _call(facade, valid, **kwargs)  # type: ignore[arg-type]
        assert sent[0]["status"] == 418 and facade.calls == [] and behind == [valid], kwargs
    sent, behind = _call(_Facade(), valid, content_type=b"application/problem+json; charset=utf-8")
    assert behind == [] and sent[0]["status"] == 200


def test_a_facade_error_is_answered_in_the_rest_shape() -> None:
    for error in (Forbidden("the key lacks a role"), InvalidBudget("max_memories must be greater than 0")):
        sent, behind = _call(_Facade(fails=error), json.dumps(VALID).encode())
        assert behind == [] and sent[0]["status"] == error.status
        assert json.loads(sent[1]["body"])["error"]["code"] == error.code
