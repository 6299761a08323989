"""The FastAPI application, built around a ready ``Container`` (see ``carnet.bootstrap``)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

import structlog
from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse

from carnet import __version__
from carnet.api import errors, routes_context, routes_health, routes_memories, routes_metrics
from carnet.bootstrap import Container

log = structlog.get_logger("carnet.access")

MAX_BODY_BYTES = 5 * 1024 * 1024


def _route_template(request: Request) -> str:
    """The matched route's path template (``/api/v1/subjects/{subject_id}/search``), set by the router
    in the scope; never the raw path, which carries a subject id (personal data)."""
    route = request.scope.get("route")
    return str(getattr(route, "path", "<unmatched>"))


def create_app(container: Container) -> FastAPI:
    app = FastAPI(title="Carnet", version=__version__, docs_url="/docs", redoc_url=None)
    app.state.container = container
    errors.install(app)
    app.include_router(routes_health.router)
    app.include_router(routes_memories.router)
    app.include_router(routes_context.router)
    app.include_router(routes_metrics.router)

    @app.middleware("http")
    async def limits_and_access_log(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        started = time.perf_counter()
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY_BYTES):
            response: Response = JSONResponse(
                {"error": {"code": "payload_too_large", "message": f"body over {MAX_BODY_BYTES} bytes"}},
                status_code=413,
            )
        else:
            response = await call_next(request)
        log.info(
            "request",
            method=request.method,
            route=_route_template(request),
            status=response.status_code,
            ms=round((time.perf_counter() - started) * 1000, 2),
            key_id=getattr(request.state, "key_id", None),
        )
        return response

    return app
