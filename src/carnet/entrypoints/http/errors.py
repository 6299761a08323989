"""One place that turns errors into HTTP answers: ``{"error": {"code", "message", ...}}``.

Validation errors never echo the rejected input (it may hold personal data): they name the fields the
published schema knows (an unknown field is ``<unknown field>``) and give fixed messages
(``carnet.domain.reconcile.values.error_fields``)."""

from __future__ import annotations

import re
from typing import Any

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from carnet.domain.reconcile.values import error_fields
from carnet.entrypoints.presenters.errors import error_body
from carnet.errors import AuthError, CarnetError, Forbidden
from carnet.services.audit import SYSTEM_CHAIN

log = structlog.get_logger(__name__)

# The codes this edge answers that are no ``CarnetError``: FastAPI's validation, Starlette's routing, and
# an exception nothing else caught. The OpenAPI document lists them with the tree's (``openapi_routes``).
EDGE_CODES = {"invalid_request": 400, "not_found": 404, "method_not_allowed": 405, "internal_error": 500}


def _audit_denial(request: Request, exc: AuthError) -> None:
    """Refused authentication (401) goes to the audit trail (ASVS 16.3.2; a 403 is recorded by the facade's
    door, once, as the refused action), queued like reads so a flood of
    bad keys costs no disk sync per request. A refused key's tenant is unknown: the `_system` chain."""
    container = getattr(request.app.state, "container", None)
    if container is None:
        return
    audit = container.audit
    tenant = getattr(request.state, "tenant", None) or SYSTEM_CHAIN
    route = getattr(request.scope.get("route"), "path", "<unmatched>")
    audit.read(audit.event(tenant=tenant, actor=getattr(request.state, "key_id", None) or "anonymous",
                           action="access.denied", outcome="denied",
                           detail={"code": exc.code, "method": request.method, "route": str(route)}))


async def carnet_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, CarnetError)
    if isinstance(exc, AuthError) and not isinstance(exc, Forbidden):  # a 403 is the door's, recorded once
        _audit_denial(request, exc)
    safe = {k: v for k, v in exc.context.items() if k in ("index", "memory_id", "intake_id", "retry_after", "reason",
                                                      "procedure_id", "status", "kinds")}
    headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
    if "retry_after" in exc.context:
        headers = {"Retry-After": str(exc.context["retry_after"])}
    return JSONResponse(error_body(exc.code, exc.message, **safe), status_code=exc.status, headers=headers)


def _known_names(app: FastAPI) -> frozenset[str]:
    """Every name the published OpenAPI document gives a field, a parameter or a schema: what an error
    may name. Computed once per app."""
    known: frozenset[str] | None = getattr(app.state, "known_field_names", None)
    if known is None:
        doc = app.openapi()
        names: set[str] = set(doc.get("components", {}).get("schemas", {}))
        _collect(doc, names)
        known = frozenset(names)
        app.state.known_field_names = known
    return known


def _collect(node: object, names: set[str]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                names.update(str(k) for k in value)
            elif key == "parameters" and isinstance(value, list):
                for p in value:
                    if isinstance(p, dict) and "name" in p:
                        names.update((str(p["name"]), str(p["name"]).lower()))
            _collect(value, names)
    elif isinstance(node, list):
        for item in node:
            _collect(item, names)


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    fields = error_fields(exc.errors(), _known_names(request.app))
    return JSONResponse(error_body("invalid_request", "the request is malformed", fields=fields),
                        status_code=EDGE_CODES["invalid_request"])


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = {EDGE_CODES[c]: c for c in ("not_found", "method_not_allowed")}.get(exc.status_code, "http_error")
    headers = dict(exc.headers or {})
    if exc.status_code == EDGE_CODES["method_not_allowed"] and (allowed := allowed_methods(request)):
        headers["Allow"] = allowed
    return JSONResponse(error_body(code, str(exc.detail)), status_code=exc.status_code, headers=headers or None)


def allowed_methods(request: Request) -> str:
    """Every method the published API takes at the request's path, for a 405's ``Allow`` (RFC 9110
    §15.5.6), read from the OpenAPI document: Starlette names only the methods of the first route whose
    path matched, and a path served by several routes (``GET`` and ``POST /api/v1/procedures``) would seem
    to take one. Empty for a path the document does not hold (the router's own header then stays)."""
    table = getattr(request.app.state, "allowed_methods", None)
    if table is None:
        table = request.app.state.allowed_methods = _method_table(request.app.openapi())
    path = request.scope["path"]
    return ", ".join(sorted({m for pattern, methods in table if pattern.fullmatch(path) for m in methods}))


def _method_table(schema: dict[str, Any]) -> list[tuple[re.Pattern[str], frozenset[str]]]:
    """Each OpenAPI path template as a pattern (a ``{parameter}`` is one path segment) and its methods."""
    return [(re.compile("[^/]+".join(map(re.escape, re.split(r"\{[^}/]+\}", template)))),
             frozenset(m.upper() for m in operations if m in _HTTP_METHODS))
            for template, operations in schema.get("paths", {}).items()]


_HTTP_METHODS = frozenset({"get", "put", "post", "delete", "options", "head", "patch", "trace"})


async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
    log.error("unhandled_error", error_type=type(exc).__name__)
    return JSONResponse(error_body("internal_error", "internal error"), status_code=EDGE_CODES["internal_error"])


def install(app: FastAPI) -> None:
    app.add_exception_handler(CarnetError, carnet_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
