"""``/mcp`` inside the FastAPI app: MCP over streamable HTTP on the REST port, behind the same keys.

``carnet serve`` then serves REST and MCP from one process, the one owner of the embedded shard.
In front of the SDK's session manager sits a gate that, for every HTTP request, reads
``Authorization: Bearer <key>``, authenticates it (401) and spends one request of the key's budget
(429), exactly as the REST dependency ``carnet.api.auth.principal`` does. Its refusals are raised as
Carnet errors, so the app's one handler answers them in the REST shape.

The session manager runs stateless with JSON responses: each POST carries one JSON-RPC message and
is authenticated on its own, nothing about a client is kept between requests (a revoked key stops
at its next request; replicas share nothing), and the tools never talk back to the client anyway.
It needs a task group for the app's whole life: ``lifespan`` runs it, with a new manager each time
(one can run only once).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio.to_thread
from mcp.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.datastructures import Headers
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from carnet.bootstrap import Container
from carnet.errors import DependencyUnavailable
from carnet.mcp.auth import STATE_KEY, bearer, from_request
from carnet.mcp.server import build_server
from carnet.services.apikeys import Principal, authenticate

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
        key = bearer(Headers(scope=scope).get("authorization"))
        p: Principal = await anyio.to_thread.run_sync(self._authenticate, key)
        state = scope.setdefault("state", {})
        state["key_id"] = p.key_id  # the access log's, as REST sets it
        state[STATE_KEY] = p
        self._container.limiter.hit(p.key_id, p.rate_limit)
        await manager.handle_request(scope, receive, send)

    def _authenticate(self, key: str | None) -> Principal:
        return authenticate(self._container.deps.catalog, self._container.pepper, key)
