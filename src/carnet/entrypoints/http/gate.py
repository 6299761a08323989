"""The door of ``/api/v1`` and ``/mcp``: authentication before anything of the body is read.

For every request under those paths, before the app (and before the body limit, which reads
chunked bodies) gets it:

1. ``Authorization: Bearer <key>`` is checked (a malformed key costs no lookup; a well-formed one
   costs one catalog lookup, in a worker thread, unless it was verified since the last change to any
   key: ``services.apikeys.KeyCache``, which a revocation by any process empties at once). The
   principal goes into the request's ASGI state (``carnet_principal``, with ``key_id`` and ``tenant``),
   where the REST dependency and the MCP endpoint read it: no route authenticates a second time.
2. Without a valid key, the client's address spends one request of its own budget
   (``CARNET_API__UNAUTHENTICATED_RATE_LIMIT``; the address as ``carnet.entrypoints.http.client_address`` reads
   it) and gets 401, or 429 ``rate_limited`` with ``Retry-After`` once that budget is spent. A valid
   key never spends from an address's budget, so a client sharing an address (a NAT, a proxy) with a
   flood keeps working. A 429 of that budget is held back for ``OVER_BUDGET_DELAY`` first: a client
   that ignores ``Retry-After`` and loops then sends one request a second per connection instead
   of as many as the loopback carries (the server reads nothing of its body meanwhile: the
   transport's buffer fills and TCP pushes back), at the cost of one sleeping coroutine. The
   refusal is counted in ``carnet_http_refused_total{reason}`` and in the
   ``RefusalTally``, which audits it in aggregate (one entry per source and window), never one entry
   per request.
3. A valid key spends one request of the key's budget (429 otherwise), as before.

Key lookups run on worker threads of their own budget (``LOOKUP_THREADS``), not the default pool's:
under a flood of arrivals they queue among themselves, never in front of the thread hops of requests
already admitted (``carnet.entrypoints.http.admission``). A lookup still waiting for a thread when the request's
deadline passes (``CARNET_API__REQUEST_DEADLINE_MS`` from arrival) is given up: ``503 overloaded``,
counted like admission's refusals (``carnet_http_overloaded_total{route, reason="deadline"}``).

Nothing here calls ``receive``: the body of a refused request is never read, parsed or buffered
by the app (the server discards what arrives of it).
"""

from __future__ import annotations

import json
import math

import anyio
import anyio.to_thread
import structlog
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from carnet.bootstrap.container import Container
from carnet.entrypoints.http.client_address import ClientAddress
from carnet.entrypoints.http.overload import route_template, time_left
from carnet.entrypoints.mcp.auth import STATE_KEY, bearer
from carnet.entrypoints.presenters.errors import error_body
from carnet.errors import CarnetError, Overloaded, RateLimited, Unauthenticated
from carnet.services.apikeys import UNKNOWN_KEY, Principal, key_id_of, well_formed
from carnet.services.ratelimit import RateLimiter
from carnet.settings.where import key_command, store_named

log = structlog.get_logger(__name__)

_GATED = ("/api/v1", "/mcp")
OVER_BUDGET_DELAY = 1.0  # seconds a 429 of the unauthenticated budget waits before it is sent
LOOKUP_THREADS = 4  # key lookups at once (one catalog read each)


def gated(path: str) -> bool:
    """``/api/v1`` and ``/mcp``, and everything under them (an unknown route included: 401 before 404)."""
    return any(path == p or path.startswith(p + "/") for p in _GATED)


class AuthGate:
    def __init__(self, app: ASGIApp, *, container: Container) -> None:
        self.app = app
        self._c = container
        api = container.settings.api
        self._addresses = ClientAddress(api.trusted_proxies)
        self._address_budget = RateLimiter(api.unauthenticated_rate_limit or None)
        self._refused = container.metrics.refused
        self._lookups = anyio.CapacityLimiter(LOOKUP_THREADS)
        self._deadline = api.request_deadline_ms / 1000

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self._c.refusals.tick()
        if not gated(scope["path"]):
            await self.app(scope, receive, send)
            return
        key = bearer(Headers(scope=scope).get("authorization"))
        try:
            p = await self._principal(key, scope)
        except Overloaded as exc:
            self._c.metrics.overloaded.labels(route_template(scope), "deadline").inc()
            await answer(send, exc)
            return
        except Unauthenticated as exc:
            if exc.message == UNKNOWN_KEY:
                log.warning("api_key_unknown", key_id=key_id_of(key), store=store_named(self._c.settings),
                            hint=f"a key works only with the store it was made in; a key for this store: "
                                 f"{key_command(self._c.settings)}")
            await self._refuse_unauthenticated(scope, send, exc)
            return
        except CarnetError as exc:  # the catalog is unavailable: 503, in the REST shape
            await answer(send, exc)
            return
        state = scope.setdefault("state", {})
        state["key_id"], state["tenant"], state[STATE_KEY] = p.key_id, p.tenant, p
        try:
            self._c.limiter.hit(p.key_id, p.rate_limit)
        except RateLimited as exc:
            self._refused.labels("key_budget").inc()
            await answer(send, exc)
            return
        await self.app(scope, receive, send)

    async def _principal(self, key: str | None, scope: Scope) -> Principal:
        if not well_formed(key):
            raise Unauthenticated("missing or malformed API key")
        c = self._c
        known = c.facade.verified(key)  # verified since the last change to any key: no hop, no lookup
        if known is not None:
            return known
        with anyio.move_on_after(time_left(scope, self._deadline)):
            return await anyio.to_thread.run_sync(c.facade.authenticate, key, limiter=self._lookups)
        raise Overloaded(retry_after=max(1, math.ceil(self._deadline)))

    async def _refuse_unauthenticated(self, scope: Scope, send: Send, exc: Unauthenticated) -> None:
        source = self._addresses.source(scope)
        refusal: CarnetError = exc
        try:
            self._address_budget.hit(f"address:{source}")
        except RateLimited as limited:
            limited.message = "too many unauthenticated requests from this address"
            refusal = limited
        self._refused.labels("address_budget" if isinstance(refusal, RateLimited) else "unauthenticated").inc()
        self._c.refusals.note(source, rate_limited=isinstance(refusal, RateLimited))
        if isinstance(refusal, RateLimited):
            await anyio.sleep(OVER_BUDGET_DELAY)
        await answer(send, refusal)


async def answer(send: Send, exc: CarnetError) -> None:
    """The error in the REST shape (``error_body``), as ``carnet.entrypoints.http.errors`` does."""
    extra: dict[str, object] = {}
    headers = [(b"content-type", b"application/json")]
    if exc.status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    if "retry_after" in exc.context:
        extra["retry_after"] = exc.context["retry_after"]
        headers.append((b"retry-after", str(exc.context["retry_after"]).encode()))
    body = json.dumps(error_body(exc.code, exc.message, **extra)).encode()
    headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": exc.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
