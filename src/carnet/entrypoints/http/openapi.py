"""What the published OpenAPI document (``/openapi.json``) says about errors and authentication."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from carnet.entrypoints.http.openapi_routes import ROLE_TEXT


def _description() -> str:
    roles = "\n".join(f"- `{role}`: {text}." for role, text in ROLE_TEXT.items())
    return f"""\
Sovereign long-term memory for LLM assistants.

**Authentication**: every `/api/v1` route takes `Authorization: Bearer <API key>`. The key decides the
tenant; nothing in a request can name another tenant (another tenant's subject is always "not found",
never "forbidden"). A key has roles, which do not imply each other; each operation names those it takes:

{roles}

**Errors** are always `{{"error": {{"code": "...", "message": "...", ...}}}}`; `code` is stable, `message`
is for humans. Each operation lists every code it can answer under its status (and all of them in
`x-error-codes`). A 503 means nothing was written; `overloaded`, `subject_busy` and `rate_limited` (429)
come with `Retry-After`.
"""


DESCRIPTION = _description()


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
