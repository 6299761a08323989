"""What the published OpenAPI document (``/openapi.json``) says about errors and authentication."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

DESCRIPTION = """\
Sovereign long-term memory for LLM assistants.

**Authentication**: every `/api/v1` route takes `Authorization: Bearer <API key>`. The key decides the
tenant; nothing in a request can name another tenant. A key has roles: `agent` (remember, search,
assemble, list, forget), `dpo` (export, erase, rectify, history, audit), `admin` (API keys, audit).

**Errors** are always `{"error": {"code": "...", "message": "...", ...}}`; `code` is stable, `message`
is for humans. Codes: `invalid_request` (400, with `fields`), `invalid_input` and `invalid_budget`
(400), `malformed_request` (400: not well-formed HTTP, answered before the app), `unauthenticated`
(401: no key, malformed, unknown or revoked), `forbidden` (403: the key lacks
the role), `not_found`, `subject_not_found`, `memory_not_found` (404; another tenant's subject is
always "not found", never "forbidden"), `method_not_allowed` (405), `request_timeout` (408: the body did not
arrive within its deadline; nothing ran), `conflict`, `store_locked` (409), `payload_too_large` (413),
`rate_limited` (429, with `retry_after` and a `Retry-After` header), `headers_too_large` (431),
`internal_error`, `kms_rejected`, `key_unwrap_failed` (500), `dependency_unavailable`,
`kms_unavailable`, `audit_unavailable`, `subject_busy` (503: nothing was written; `subject_busy` has a
`Retry-After`: another process held the subject past the lock timeout), `overloaded` (503 with
`Retry-After`: the process is at capacity; nothing of the request ran, so it may be sent again).
"""


class ErrorDetail(BaseModel):
    code: str = Field(examples=["memory_not_found"])
    message: str = Field(examples=["memory 0b7c… not found"])


class ErrorBody(BaseModel):
    error: ErrorDetail


_ERRORS = {
    400: ("The request is malformed or a value is out of range.", "invalid_request"),
    401: ("No API key, or a malformed, unknown or revoked one.", "unauthenticated"),
    403: ("The key lacks the role this route needs.", "forbidden"),
    404: ("No such subject or record for this key's tenant.", "subject_not_found"),
    408: ("The body did not arrive within its deadline; nothing ran.", "request_timeout"),
    413: ("The body is over the size limit.", "payload_too_large"),
    429: ("The key spent its request budget; retry after `Retry-After` seconds.", "rate_limited"),
    503: ("A dependency (vector store, KMS, audit trail) is unavailable, or the process is at capacity "
          "(`overloaded`, with `Retry-After`); nothing was written.",
          "dependency_unavailable"),
}


def error_responses() -> dict[int | str, dict[str, Any]]:
    return {status: {"model": ErrorBody, "description": text,
                     "content": {"application/json": {"example": {"error": {"code": code, "message": "…"}}}}}
            for status, (text, code) in _ERRORS.items()}
