"""The FastAPI application, built around a ready ``Container`` (see ``carnet.bootstrap.wiring``)."""

from __future__ import annotations

from fastapi import FastAPI

from carnet import __version__
from carnet.bootstrap.container import Container
from carnet.entrypoints.http import (
    console,
    docs_ui,
    errors,
    openapi_routes,
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
from carnet.entrypoints.http.access_log import AccessLog
from carnet.entrypoints.http.admission import Admission
from carnet.entrypoints.http.assemble_path import AssemblePath, route_of
from carnet.entrypoints.http.body_limit import BodyLimit
from carnet.entrypoints.http.gate import AuthGate
from carnet.entrypoints.http.openapi import DESCRIPTION, error_responses
from carnet.entrypoints.mcp.http import McpHttp


def create_app(container: Container) -> FastAPI:
    mcp = McpHttp(container)  # MCP over streamable HTTP at /mcp; its lifespan runs the SDK's session manager
    app = FastAPI(title="Carnet", version=__version__, description=DESCRIPTION, docs_url=None, redoc_url=None,
                  responses=error_responses(), lifespan=mcp.lifespan)
    app.state.container = container
    errors.install(app)
    openapi_routes.install(app)  # each operation's roles and error codes in /openapi.json
    for module in (routes_health, routes_memories, routes_intakes, routes_context, routes_subjects, routes_audit,
                   routes_admin, routes_metrics, routes_procedures):
        app.include_router(module.router)
    console.install(app, container)  # /console: server-rendered pages over the facade (docs/console.md)
    docs_ui.install(app)  # /docs with Swagger UI's assets served here, not from a CDN (air-gapped sites)
    app.router.routes.append(mcp.route)
    observe = container.metrics.request_seconds
    # Outermost last: the access log, then the gate (authentication before any of the body is read),
    # then the body limit (the whole body read, bounded in size and time: 413, 408), then admission (a slot,
    # or 503 overloaded: a bad key never takes one, and no slot waits on a client's body), then assemble's
    # own path (a valid assemble answered without FastAPI's router), then the app.
    api, m = container.settings.api, container.metrics
    app.add_middleware(AssemblePath, facade=container.facade, route=route_of(routes_context.router))
    app.add_middleware(Admission, slots=api.max_concurrency, max_queue=api.max_queue,
                       deadline=api.request_deadline_ms / 1000, queue_target=api.queue_target_ms / 1000,
                       refused=m.overloaded,
                       waiting=m.admission_waiting, in_flight=m.admission_in_flight)
    app.add_middleware(BodyLimit, max_bytes=api.max_body_bytes, deadline=api.body_read_deadline_ms / 1000,
                       per_key=api.body_reads_per_key)
    app.add_middleware(AuthGate, container=container)
    app.add_middleware(AccessLog, observe=observe)
    return app
