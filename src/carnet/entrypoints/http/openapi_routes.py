"""What each route of the published OpenAPI document says about who may call it and how it can fail.

One table, ``ROUTES``: for each operation the roles that pass the door and the errors of the tree
(``carnet.errors``) its own rules can raise. What every route shares is added from what the route is:
the edge's refusals (``EDGE``: the server protocol, the key gate, the body limit, admission, an
unexpected error), ``forbidden`` when it has roles, ``invalid_request`` when it takes parameters or a
body (``carnet.entrypoints.http.errors.EDGE_CODES``). ``document`` writes them into the generated
document: the roles in the operation's description, and per status one response listing its codes, each
an example of the error body. tests/unit/test_openapi_errors.py checks the table against the error tree,
the access matrix and the routes the app serves."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI

from carnet.crypto.errors import CryptoError, EnvelopeError, KeyDestroyed, KeyStoreCorrupt
from carnet.entrypoints.http.errors import EDGE_CODES
from carnet.errors import (
    AuditUnavailable,
    CarnetError,
    Conflict,
    DependencyUnavailable,
    EmbedderUnavailable,
    Forbidden,
    HeadersTooLarge,
    IdempotencyKeyReused,
    IntakeNotFound,
    InvalidBudget,
    InvalidInput,
    KmsRejected,
    KmsUnavailable,
    LegalHold,
    MalformedRequest,
    MemoryNotFound,
    MemoryUnreadable,
    NotFound,
    NotSuperseded,
    Overloaded,
    PayloadTooLarge,
    ProcedureHasPersonalData,
    ProcedureNotFound,
    ProcedureState,
    RateLimited,
    RequestTimeout,
    SubjectBusy,
    SubjectLockLost,
    SubjectNotFound,
    Unauthenticated,
    UnwrapFailed,
)
from carnet.services.roles import ADMIN, AGENT, DPO, SUPERVISOR

Errors = tuple[type[CarnetError], ...]

ROLE_TEXT = {
    AGENT: "the assistant's key: remember, messages, search, assemble, lookup, list, get, forget; the approved "
           "team procedures, and proposing one",
    SUPERVISOR: "team procedures: every status, approve, reject, retire; restore a superseded record; "
                "no one's memories otherwise",
    DPO: "the data subject's rights: export, erase, rectify, history, restore, legal hold, end of relationship, "
         "the audit trail",
    ADMIN: "API keys, maintenance, backups and the audit trail; no one's memories",
}

# Every route under /api/v1: not well-formed HTTP, no valid key, a body too big or too slow, the key's
# budget spent, no slot, the catalog down while the key is looked up, an unexpected error.
EDGE: Errors = (MalformedRequest, HeadersTooLarge, Unauthenticated, RequestTimeout, PayloadTooLarge, RateLimited,
                Overloaded, DependencyUnavailable)
# A subject's data key: the KMS down or refusing, the key store's entry unreadable, a sealed field that does
# not open where a read cannot leave the record out (the reads that can say ``unreadable`` instead).
_SEALED: Errors = (KmsUnavailable, KmsRejected, UnwrapFailed, CryptoError, EnvelopeError, KeyDestroyed,
                   KeyStoreCorrupt)
# A write under a subject's lock (``conflict``: its pseudonym map changed meanwhile; retry it).
_WRITE: Errors = (AuditUnavailable, SubjectBusy, SubjectLockLost, Conflict, *_SEALED)
_READ: Errors = (SubjectNotFound, *_SEALED)  # a subject's records opened
_EMBED: Errors = (EmbedderUnavailable,)  # a text embedded (the model in another process or server)


@dataclass(frozen=True, slots=True)
class Documented:
    roles: tuple[str, ...]
    errors: Errors


def _d(roles: tuple[str, ...], *errors: type[CarnetError] | Errors) -> Documented:
    flat: list[type[CarnetError]] = []
    for e in errors:
        flat.extend(e if isinstance(e, tuple) else (e,))
    return Documented(roles, tuple(dict.fromkeys(flat)))


_S = "/api/v1/subjects/{subject_id}"
_M = _S + "/memories/{memory_id}"
_P = "/api/v1/procedures/{procedure_id}"

ROUTES: dict[tuple[str, str], Documented] = {
    ("POST", _S + "/memories"): _d((AGENT,), InvalidInput, IdempotencyKeyReused, _WRITE, _EMBED),
    ("GET", _S + "/memories"): _d((AGENT, DPO), InvalidInput, _READ),
    ("POST", _S + "/memories/lookup"): _d((AGENT,), InvalidInput, _READ),
    ("GET", _M): _d((AGENT, DPO), MemoryNotFound, MemoryUnreadable, _READ),
    ("PATCH", _M): _d((DPO,), InvalidInput, MemoryNotFound, MemoryUnreadable, SubjectNotFound, _WRITE, _EMBED),
    ("DELETE", _M): _d((AGENT, DPO), MemoryNotFound, SubjectNotFound, _WRITE),
    ("POST", _M + "/restore"): _d((SUPERVISOR, DPO), InvalidInput, MemoryNotFound, NotSuperseded, SubjectNotFound,
                                  _WRITE),
    ("GET", _M + "/history"): _d((DPO,), MemoryNotFound, SubjectNotFound),
    ("POST", _S + "/search"): _d((AGENT,), InvalidInput, _READ, _EMBED),
    ("POST", _S + "/messages"): _d((AGENT,), InvalidInput, IdempotencyKeyReused, _WRITE),
    ("GET", "/api/v1/intakes/{intake_id}"): _d((AGENT, DPO), IntakeNotFound),
    ("POST", "/api/v1/context/assemble"): _d((AGENT,), InvalidInput, InvalidBudget, _READ, _EMBED),
    ("GET", _S + "/export"): _d((DPO,), AuditUnavailable, _READ),
    ("DELETE", _S): _d((DPO,), SubjectNotFound, LegalHold, _WRITE),
    ("GET", _S + "/retention"): _d((DPO,), SubjectNotFound),
    ("PUT", _S + "/legal-hold"): _d((DPO,), InvalidInput, SubjectNotFound, _WRITE),
    ("DELETE", _S + "/legal-hold"): _d((DPO,), SubjectNotFound, _WRITE),
    ("PUT", _S + "/relationship-end"): _d((DPO,), InvalidInput, SubjectNotFound, _WRITE),
    ("GET", "/api/v1/audit"): _d((DPO, ADMIN), InvalidInput, AuditUnavailable),
    ("GET", "/api/v1/audit/verify"): _d((DPO, ADMIN), AuditUnavailable),
    ("POST", "/api/v1/admin/maintain"): _d((ADMIN,), AuditUnavailable, SubjectBusy, _SEALED),
    ("POST", "/api/v1/admin/backup"): _d((ADMIN,), InvalidInput, Conflict, AuditUnavailable),
    ("GET", "/api/v1/admin/apikeys"): _d((ADMIN,)),
    ("POST", "/api/v1/admin/apikeys"): _d((ADMIN,), InvalidInput, AuditUnavailable),
    ("DELETE", "/api/v1/admin/apikeys/{key_id}"): _d((ADMIN,), NotFound, AuditUnavailable),
    ("GET", "/api/v1/procedures"): _d((AGENT, SUPERVISOR), InvalidInput),
    ("POST", "/api/v1/procedures"): _d((AGENT, SUPERVISOR), InvalidInput, ProcedureHasPersonalData,
                                       AuditUnavailable, _EMBED),
    ("GET", _P): _d((AGENT, SUPERVISOR), ProcedureNotFound),
    ("POST", _P + "/approve"): _d((SUPERVISOR,), ProcedureNotFound, ProcedureState, AuditUnavailable),
    ("POST", _P + "/reject"): _d((SUPERVISOR,), ProcedureNotFound, ProcedureState, AuditUnavailable),
    ("POST", _P + "/retire"): _d((SUPERVISOR,), ProcedureNotFound, ProcedureState, AuditUnavailable),
}

# Outside /api/v1: no key, no role; what the server protocol refuses, and readiness's own 503.
OPEN: dict[tuple[str, str], Errors] = {
    ("GET", "/healthz"): (MalformedRequest, HeadersTooLarge),
    ("GET", "/readyz"): (MalformedRequest, HeadersTooLarge),
    ("GET", "/metrics"): (MalformedRequest, HeadersTooLarge),
}


def codes(method: str, path: str, operation: dict[str, Any]) -> dict[str, int]:
    """Every error code the operation can answer, with its status."""
    found: dict[str, int] = {}
    documented = ROUTES.get((method, path))
    errors = (*EDGE, *(documented.errors if documented else ())) if documented else OPEN.get((method, path), ())
    for error in errors:
        found[error.code] = error.status
    if documented is not None:
        found[Forbidden.code] = Forbidden.status
        found["internal_error"] = EDGE_CODES["internal_error"]
        if operation.get("parameters") or operation.get("requestBody"):
            found["invalid_request"] = EDGE_CODES["invalid_request"]
    return found


def roles_line(roles: tuple[str, ...]) -> str:
    return "**Roles**: " + ", ".join(f"`{r}`" for r in roles) + " (a key without one of them: 403 `forbidden`)."


def document(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` (FastAPI's generated document) with each operation's roles and error codes."""
    for path, operations in schema.get("paths", {}).items():
        for method, operation in operations.items():
            key = (method.upper(), path)
            documented = ROUTES.get(key)
            if documented is not None:
                described = operation.get("description", "")
                operation["description"] = f"{described}\n\n{roles_line(documented.roles)}".strip()
                operation["x-roles"] = list(documented.roles)
            if documented is None and key not in OPEN:
                continue
            found = codes(*key, operation)
            operation["x-error-codes"] = dict(sorted(found.items()))
            responses = operation.setdefault("responses", {})
            for status, listed in _by_status(found).items():
                responses[str(status)] = _response(status, listed, responses.get(str(status)))
            for stale in [s for s in responses if s.isdigit() and int(s) >= 400 and int(s) not in found.values()
                          and "ReadyOut" not in str(responses[s])]:
                del responses[stale]
    return schema


def _by_status(found: dict[str, int]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for code, status in sorted(found.items(), key=lambda kv: (kv[1], kv[0])):
        out.setdefault(status, []).append(code)
    return out


def _response(status: int, listed: list[str], existing: dict[str, Any] | None) -> dict[str, Any]:
    if existing is not None and "ReadyOut" in str(existing):  # readiness answers its own body on 503
        return existing
    return {
        "description": "Codes: " + ", ".join(f"`{c}`" for c in listed) + ".",
        "content": {"application/json": {
            "schema": {"$ref": "#/components/schemas/ErrorBody"},
            "examples": {c: {"value": {"error": {"code": c, "message": "…"}}} for c in listed}}},
    }


def install(app: FastAPI) -> None:
    """``app.openapi`` as FastAPI generates it, then documented (once: the document is cached)."""
    generate: Callable[[], dict[str, Any]] = app.openapi
    done: list[bool] = []

    def openapi() -> dict[str, Any]:
        schema = generate()
        if not done:
            document(schema)
            done.append(True)
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
