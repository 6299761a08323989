"""``/mcp`` inside the FastAPI app: MCP over streamable HTTP on the REST port, behind the same keys.

``carnet serve`` then serves REST and MCP from one process, the one owner of the embedded shard.
Every HTTP request to ``/mcp`` has passed the app's gate (``carnet.entrypoints.http.gate``) first, as REST
requests do: it authenticated the key (401) and spent one request of its budget (429) before
anything of the body was read, and left the principal in the request's ASGI state, where the tools
read it (``carnet.entrypoints.mcp.auth.from_request``). A request that reaches this endpoint without one is
refused (fail closed).

The session manager runs stateless with JSON responses: each POST carries one JSON-RPC message and
is authenticated on its own, nothing about a client is kept between requests (a revoked key stops
at its next request; replicas share nothing), and the tools never talk back to the client anyway.
Each POST is admitted like a REST request (``carnet.entrypoints.http.admission``: a slot, or
``503 overloaded``); GET (an event stream) and DELETE (a session's end) get ``405``, so no connection
is held open here beyond one POST's work (issue 46, finding 7).
It needs a task group for the app's whole life: ``lifespan`` runs it, with a new manager each time
(one can run only once).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from carnet.bootstrap.container import Container
from carnet.entrypoints.mcp.auth import STATE_KEY, from_request
from carnet.entrypoints.mcp.server import build_server
from carnet.entrypoints.presenters.errors import error_body
from carnet.errors import DependencyUnavailable, MethodNotAllowed, Unauthenticated
from carnet.services.apikeys import Principal

PATH = "/mcp"


class McpHttp:
    """The ASGI app served at ``/mcp``, and the lifespan the FastAPI app must run for it."""

    def __init__(self, container: Container) -> None:
        self._container = container
        self._server: Server[Any] = build_server(container.facade, principal=from_request)
        self._manager: StreamableHTTPSessionManager | None = None
        # A plain route (not a mount): `/mcp` itself answers, without a redirect to `/mcp/`, and stays
        # out of the OpenAPI schema, which lists only FastAPI's own routes.
        self.route = Route(PATH, endpoint=self, name="mcp", include_in_schema=False)

    @asynccontextmanager
    async def lifespan(self, _app: object) -> AsyncIterator[None]:
        manager = StreamableHTTPSessionManager(app=self._server, stateless=True, json_response=True)
        async with manager.run():
            self._manager = manager
            try:
                yield
            finally:
                self._manager = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope["route"] = self.route  # FastAPI's router sets it for its own routes only: the access log's template
        manager = self._manager
        if manager is None:
            raise DependencyUnavailable("the MCP endpoint is not running: the app was started without its lifespan")
        if not isinstance(scope.get("state", {}).get(STATE_KEY), Principal):  # not through the gate
            raise Unauthenticated("missing or malformed API key")
        if scope["method"] != "POST":
            await _post_only(scope, receive, send)
            return
        await manager.handle_request(scope, receive, send)


async def _post_only(scope: Scope, receive: Receive, send: Send) -> None:
    """405 for GET (the SSE stream of server-initiated messages) and DELETE (ending a session): stateless,
    the server keeps no session and never talks first, so a GET stream would only be a connection held
    open without limit; the transport's spec allows a server to answer 405 here."""
    exc = MethodNotAllowed("only POST is served at /mcp: no event stream, no session")
    body = error_body(exc.code, exc.message)
    await JSONResponse(body, status_code=exc.status, headers={"Allow": "POST"})(scope, receive, send)
