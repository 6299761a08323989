"""The FastAPI application, built around a ready ``Container`` (see ``carnet.bootstrap``)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

import structlog
from fastapi import FastAPI, Request, Response

from carnet import __version__
from carnet.api import (
    console,
    docs_ui,
    errors,
    routes_admin,
    routes_audit,
    routes_context,
    routes_health,
    routes_intakes,
    routes_memories,
    routes_metrics,
    routes_procedures,
    routes_subjects,
)
from carnet.api.admission import Admission
from carnet.api.body_limit import BodyLimit
from carnet.api.gate import AuthGate
from carnet.api.openapi import DESCRIPTION, error_responses
from carnet.bootstrap import Container
from carnet.mcp.http import McpHttp

log = structlog.get_logger("carnet.access")

_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})


def _route_template(request: Request) -> str:
    """The matched route's path template (``/api/v1/subjects/{subject_id}/search``), set by the router
    in the scope; never the raw path, which carries a subject id (personal data)."""
    route = request.scope.get("route")
    return str(getattr(route, "path", "<unmatched>"))


def create_app(container: Container) -> FastAPI:
    mcp = McpHttp(container)  # MCP over streamable HTTP at /mcp; its lifespan runs the SDK's session manager
    app = FastAPI(title="Carnet", version=__version__, description=DESCRIPTION, docs_url=None, redoc_url=None,
                  responses=error_responses(), lifespan=mcp.lifespan)
    app.state.container = container
    errors.install(app)
    for module in (routes_health, routes_memories, routes_intakes, routes_context, routes_subjects, routes_audit,
                   routes_admin, routes_metrics, routes_procedures):
        app.include_router(module.router)
    console.install(app, container)  # /console: server-rendered pages over the facade (docs/console.md)
    docs_ui.install(app)  # /docs with Swagger UI's assets served here, not from a CDN (air-gapped sites)
    app.router.routes.append(mcp.route)
    observe = container.metrics.request_seconds
    # Outermost last: the access log, then the gate (authentication before any of the body is read),
    # then admission (a slot, or 503 overloaded: a bad key never takes one), then the body limit (which
    # reads chunked bodies), then the app.
    api, m = container.settings.api, container.metrics
    app.add_middleware(BodyLimit, max_bytes=api.max_body_bytes)
    app.add_middleware(Admission, slots=api.max_concurrency, max_queue=api.max_queue,
                       deadline=api.request_deadline_ms / 1000, refused=m.overloaded,
                       waiting=m.admission_waiting, in_flight=m.admission_in_flight)
    app.add_middleware(AuthGate, container=container)

    @app.middleware("http")
    async def access_log_and_latency(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        started = time.perf_counter()
        request.state.arrived = started  # admission's deadline counts from here (carnet.api.admission)
        response = await call_next(request)
        elapsed = time.perf_counter() - started
        route = _route_template(request)
        method = request.method if request.method in _METHODS else "OTHER"  # bounded label values
        observe.labels(method, route, str(response.status_code)).observe(elapsed)
        log.info("request", method=request.method, route=route, status=response.status_code,
                 ms=round(elapsed * 1000, 2), key_id=getattr(request.state, "key_id", None))
        return response

    return app
