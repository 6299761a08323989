"""The access log and the request-latency histogram: the outermost middleware, in plain ASGI.

One line per request (method, route template, status, milliseconds, key id) and one observation of
``carnet_http_request_seconds``. Plain ASGI rather than ``@app.middleware("http")``: Starlette's
``BaseHTTPMiddleware`` runs the rest of the application in a task of its own and streams the response
through memory channels, which on the assemble hot path cost more than the log itself
(docs/benchmarks.md, "The HTTP layer's share"). The time counts until the response's last byte is
sent. A request that raised is logged with status 500, the answer Starlette's error handler (outside this
middleware) gives; one that sent no answer because it was cancelled or the application returned without
one (the client gave up or went away) with 499, nginx's "client closed request": not a server error.
"""

from __future__ import annotations

import time
from typing import Any

import structlog
from prometheus_client import Histogram
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = structlog.get_logger("carnet.access")

NO_ANSWER = 499  # nginx's "client closed request": the request was cancelled or sent no response
_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})


def route_template(scope: Scope) -> str:
    """The matched route's path template (``/api/v1/subjects/{subject_id}/search``), set by the router
    in the scope; never the raw path, which carries a subject id (personal data)."""
    return str(getattr(scope.get("route"), "path", "<unmatched>"))


class AccessLog:
    def __init__(self, app: ASGIApp, *, observe: Histogram) -> None:
        self.app, self._observe = app, observe

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        state: dict[str, Any] = scope.setdefault("state", {})
        state["arrived"] = started  # admission's deadline counts from here (carnet.entrypoints.http.admission)
        status: int | None = None

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception:  # not a cancellation (a BaseException): that, like no answer at all, is NO_ANSWER
            status = status or 500
            raise
        finally:
            status = status or NO_ANSWER
            elapsed = time.perf_counter() - started
            route = route_template(scope)
            method = scope["method"] if scope["method"] in _METHODS else "OTHER"  # bounded label values
            self._observe.labels(method, route, str(status)).observe(elapsed)
            log.info("request", method=scope["method"], route=route, status=status, ms=round(elapsed * 1000, 2),
                     key_id=state.get("key_id"))
