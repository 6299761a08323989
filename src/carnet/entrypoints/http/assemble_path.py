"""``POST /api/v1/context/assemble`` answered in plain ASGI: the hot path without FastAPI's router.

Assemble is the one call an assistant makes before each LLM turn; under load FastAPI's request
machinery (routing, the dependencies, the body read again through ``Request``, the exception and
exit-stack middlewares, the telemetry wrappers, ``run_in_threadpool``) cost the server CPU beside the
work itself (docs/benchmarks.md, "The server's own CPU per assemble", issue 49). This middleware sits
innermost, behind the gate, the body limit and admission (``carnet.entrypoints.http.app``): a request
reaching it is authenticated, its body read whole and bounded, its slot held. It answers **only a
request FastAPI would answer 2xx-or-the-facade's-error**: the method POST, a JSON content type, a body
that parses and validates as ``AssembleBody`` (parsed as FastAPI does: ``json.loads`` then the model in
Python mode), and the gate's principal present. Anything else goes on to the FastAPI route unchanged
(the body replayed), so every refusal of the request itself (400 ``invalid_request`` and its field
names, 401, 405...) is FastAPI's, byte for byte.

What it runs is the route's own ``routes_context.answer``, in one worker thread like the route's; an
error of the facade is answered by the app's handler for ``CarnetError`` (``errors.carnet_error``: the
same body, headers and audit of a denial), and anything else propagates to the server-error middleware
(500 ``internal_error``), as from the route. ``scope["route"]`` is set to the route, so the access log
and the metrics name the same template.
"""

from __future__ import annotations

import json

import anyio.to_thread
from fastapi import APIRouter
from pydantic import ValidationError
from starlette.requests import Request
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from carnet.entrypoints.http import errors
from carnet.entrypoints.http.body_limit import replay
from carnet.entrypoints.http.routes_context import PATH, answer
from carnet.entrypoints.http.schemas import AssembleBody
from carnet.entrypoints.mcp.auth import STATE_KEY
from carnet.errors import CarnetError
from carnet.services.apikeys import Principal
from carnet.services.facade import Facade


class AssemblePath:
    def __init__(self, app: ASGIApp, *, facade: Facade, route: BaseRoute) -> None:
        self.app, self._facade, self._route = app, facade, route

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != PATH or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        message = await receive()  # the body limit in front has read it whole: one message
        body = _valid(scope, message)
        who = scope.get("state", {}).get(STATE_KEY)
        if body is None or not isinstance(who, Principal):
            await self.app(scope, replay(message, receive), send)
            return
        scope["route"] = self._route
        try:
            response = await anyio.to_thread.run_sync(answer, self._facade, who, body)
        except CarnetError as exc:
            response = await errors.carnet_error(Request(scope), exc)
        await response(scope, receive, send)


def _valid(scope: Scope, message: Message) -> AssembleBody | None:
    """The body as FastAPI would hand it to the route, or None (FastAPI decides what to answer)."""
    if message["type"] != "http.request" or message.get("more_body", False) or not _json(scope):
        return None
    try:
        return AssembleBody.model_validate(json.loads(message.get("body", b"")))
    except (ValueError, ValidationError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return None


def _json(scope: Scope) -> bool:
    """A JSON content type, as FastAPI reads one (``application/json`` or ``application/…+json``)."""
    for name, value in scope["headers"]:
        if name == b"content-type":
            kind = bytes(value).split(b";", 1)[0].strip().lower()
            return kind == b"application/json" or (kind.startswith(b"application/") and kind.endswith(b"+json"))
    return False


def route_of(router: APIRouter) -> BaseRoute:
    """The route of ``POST PATH`` in ``router`` (``routes_context.router``), whose template the access log
    and the metrics name (the app's own list holds included routers, not their routes)."""
    for r in router.routes:
        if getattr(r, "path", None) == PATH and "POST" in (getattr(r, "methods", None) or ()):
            return r
    raise LookupError(f"no POST {PATH} route")
