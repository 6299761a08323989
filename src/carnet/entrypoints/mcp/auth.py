"""Who is calling a tool: the same API keys as REST, the tenant always the key's.

Each transport hands the server a ``Principals`` function, called for every tool call:

- stdio: one key for the process, from the environment. It is checked at startup, and again at each
  call, so a revoked key stops working at once (as over REST), and the key's rate limit applies.
- streamable HTTP: the gate in ``carnet.entrypoints.mcp.http`` authenticates each HTTP request and puts the
  principal in the request's ASGI state; the tool reads it from the request the SDK passes along.
  Nothing is remembered between requests, so no MCP session outlives or borrows a key.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.server import ServerRequestContext

from carnet.bootstrap.container import Container
from carnet.errors import Unauthenticated
from carnet.services.apikeys import Principal

Principals = Callable[[ServerRequestContext[Any, Any]], Principal]

STATE_KEY = "carnet_principal"  # in the ASGI scope's "state", beside the access log's "key_id"


def with_key(container: Container, key: str) -> Principals:
    """Every call authenticated with ``key`` (a catalog lookup) and counted against its rate limit."""

    def principal(_: ServerRequestContext[Any, Any]) -> Principal:
        p = container.facade.authenticate(key)
        container.limiter.hit(p.key_id, p.rate_limit)
        return p

    return principal


def from_request(ctx: ServerRequestContext[Any, Any]) -> Principal:
    """The principal the HTTP gate stored on this request. Fails closed: a call that did not come
    through the gate (no request, no principal) is unauthenticated."""
    scope = getattr(ctx.request, "scope", None)
    state = scope.get("state") if isinstance(scope, dict) else None
    p = state.get(STATE_KEY) if isinstance(state, dict) else None
    if not isinstance(p, Principal):
        raise Unauthenticated("missing or malformed API key")
    return p


def bearer(authorization: str | None) -> str | None:
    """The credentials of an ``Authorization: Bearer <key>`` header (the scheme is case-insensitive)."""
    scheme, _, credentials = (authorization or "").partition(" ")
    if scheme.lower() != "bearer":
        return None
    return credentials.strip() or None
