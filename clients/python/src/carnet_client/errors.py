"""What the client raises. Everything is a ``CarnetError``; a Carnet error answer becomes the
subclass named by its ``code``, or by its HTTP status when the code is one this client does not know.

    CarnetError                     status, code, message, details
    ├── TransportError              no answer: connection refused, TLS failure, protocol error
    │   └── Timeout                 connect, read, write or pool timeout
    ├── UnexpectedResponse          a success whose body is not what Carnet sends (a missing field)
    └── ApiError                    Carnet answered ``{"error": {"code", "message", ...}}``
        ├── BadRequest              400 (any other code)
        │   ├── InvalidRequest      400 invalid_request           ``fields``: what the schema refused
        │   └── InvalidInput        400 invalid_input             ``index``: which item of a batch
        │       └── InvalidBudget   400 invalid_budget
        ├── Unauthenticated         401 unauthenticated           missing, unknown or revoked key
        ├── Forbidden               403 forbidden                 the key lacks the role
        ├── NotFound                404 not_found                 also an unknown route
        │   ├── SubjectNotFound     404 subject_not_found
        │   ├── MemoryNotFound      404 memory_not_found          ``memory_id``
        │   └── IntakeNotFound      404 intake_not_found          ``intake_id``
        ├── MethodNotAllowed        405 method_not_allowed
        ├── Conflict                409 conflict
        │   ├── StoreLocked         409 store_locked              the embedded store is owned by another process
        │   ├── LegalHold           409 legal_hold                erasure refused: lift the subject's legal hold first
        │   └── NotSuperseded       409 not_superseded            restore: the record is not superseded
        ├── PayloadTooLarge         413 payload_too_large
        ├── IdempotencyKeyReused    422 idempotency_key_reused    the Idempotency-Key was first sent with another body
        ├── RateLimited             429 rate_limited              ``retry_after``: seconds to wait
        ├── ServerError             500 internal_error (and any other 5xx)
        │   └── KmsRejected         500 kms_rejected
        │       └── KeyUnwrapFailed 500 key_unwrap_failed
        └── ServiceUnavailable      503 dependency_unavailable    retry later
            ├── Overloaded          503 overloaded                at capacity, nothing ran; ``retry_after``
            ├── KmsUnavailable      503 kms_unavailable
            └── AuditUnavailable    503 audit_unavailable         the write was refused, not half done

An error answer without Carnet's body (a proxy's 502 page) maps by its status alone.
Error answers never echo the request (it may hold personal data), and neither do these exceptions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from carnet_client._retry import retry_after


class CarnetError(Exception):
    """``status`` is the HTTP status (None when no answer came), ``details`` the error's other fields."""

    def __init__(self, message: str, *, status: int | None = None, code: str = "client_error",
                 details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.details: dict[str, Any] = dict(details or {})

    def __str__(self) -> str:
        return f"{self.code} ({self.status}): {self.message}" if self.status else f"{self.code}: {self.message}"


class TransportError(CarnetError):
    """The request got no answer; ``__cause__`` is the httpx exception."""


class Timeout(TransportError):
    pass


class UnexpectedResponse(CarnetError):
    """A success status whose body this client cannot read (not JSON, a field missing)."""


class ApiError(CarnetError):
    status: int


class BadRequest(ApiError):
    pass


class InvalidRequest(BadRequest):
    @property
    def fields(self) -> list[dict[str, Any]]:
        """``[{"loc": ["body", "importance"], "type": "less_than_equal", "msg": ...}]``."""
        return list(self.details.get("fields") or [])


class InvalidInput(BadRequest):
    @property
    def index(self) -> int | None:
        """The position of the refused item in a batch, when the server says."""
        value = self.details.get("index")
        return int(value) if value is not None else None


class InvalidBudget(InvalidInput):
    pass


class Unauthenticated(ApiError):
    pass


class Forbidden(ApiError):
    pass


class NotFound(ApiError):
    pass


class SubjectNotFound(NotFound):
    pass


class MemoryNotFound(NotFound):
    @property
    def memory_id(self) -> str | None:
        value = self.details.get("memory_id")
        return str(value) if value is not None else None


class IntakeNotFound(NotFound):
    pass


class ProcedureNotFound(NotFound):
    pass


class ProcedurePersonalData(InvalidInput):
    """A team procedure's text names someone: refused (``kinds`` says what was found)."""

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(str(k) for k in self.details.get("kinds") or ())


class MethodNotAllowed(ApiError):
    pass


class Conflict(ApiError):
    pass


class StoreLocked(Conflict):
    pass


class LegalHold(Conflict):
    pass


class NotSuperseded(Conflict):
    """A restore of a record that is not superseded (``status``: what it is): nothing to undo."""


class ProcedureState(Conflict):
    """That decision does not apply to the procedure's current ``status`` (decided already?)."""


class PayloadTooLarge(ApiError):
    pass


class IdempotencyKeyReused(ApiError):
    """The ``Idempotency-Key`` was already used with a different body: nothing was written. Use a new
    key for a new request; resend the same body to replay the first one."""


class RateLimited(ApiError):
    @property
    def retry_after(self) -> float | None:
        """Seconds to wait before the key has budget again (the body's field, else Retry-After)."""
        value = self.details.get("retry_after")
        return float(value) if value is not None else None


class ServerError(ApiError):
    pass


class KmsRejected(ServerError):
    pass


class KeyUnwrapFailed(KmsRejected):
    pass


class ServiceUnavailable(ApiError):
    pass


class Overloaded(ServiceUnavailable):
    """The server was at capacity and refused the request before any of it ran (a write wrote
    nothing): send it again after ``retry_after`` seconds (``Retry()`` does)."""

    @property
    def retry_after(self) -> float | None:
        value = self.details.get("retry_after")
        return float(value) if value is not None else None


class KmsUnavailable(ServiceUnavailable):
    pass


class AuditUnavailable(ServiceUnavailable):
    pass


_BY_CODE: dict[str, type[ApiError]] = {
    "invalid_request": InvalidRequest, "invalid_input": InvalidInput, "invalid_budget": InvalidBudget,
    "unauthenticated": Unauthenticated, "forbidden": Forbidden, "not_found": NotFound,
    "subject_not_found": SubjectNotFound, "memory_not_found": MemoryNotFound,
    "intake_not_found": IntakeNotFound, "procedure_not_found": ProcedureNotFound,
    "procedure_personal_data": ProcedurePersonalData, "procedure_state": ProcedureState,
    "method_not_allowed": MethodNotAllowed, "conflict": Conflict, "store_locked": StoreLocked,
    "legal_hold": LegalHold, "not_superseded": NotSuperseded, "idempotency_key_reused": IdempotencyKeyReused,
    "payload_too_large": PayloadTooLarge, "rate_limited": RateLimited, "internal_error": ServerError,
    "kms_rejected": KmsRejected, "key_unwrap_failed": KeyUnwrapFailed,
    "dependency_unavailable": ServiceUnavailable, "kms_unavailable": KmsUnavailable,
    "audit_unavailable": AuditUnavailable, "overloaded": Overloaded,
}
_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequest, 401: Unauthenticated, 403: Forbidden, 404: NotFound, 405: MethodNotAllowed,
    409: Conflict, 413: PayloadTooLarge, 429: RateLimited, 503: ServiceUnavailable,
}


def error_class(code: str, status: int) -> type[ApiError]:
    """The class for ``code``; for a code this client does not know, the class of its status family."""
    if code in _BY_CODE:
        return _BY_CODE[code]
    return _BY_STATUS.get(status) or (ServerError if status >= 500 else ApiError)


def from_response(response: httpx.Response) -> CarnetError:
    """The exception for an error answer (its body must have been read)."""
    status = response.status_code
    try:
        error = response.json()["error"]
        code, message = str(error["code"]), str(error["message"])
    except (ValueError, KeyError, TypeError):
        # Not Carnet's error shape: a proxy or a load balancer answered. Its body is left out (a
        # gateway page may echo the URL, which holds a subject id); the content type says what it was.
        kind = response.headers.get("content-type", "no content type")
        return error_class("", status)(f"HTTP {status} without a Carnet error body ({kind})", status=status,
                                       code=f"http_{status}")
    details = {k: v for k, v in error.items() if k not in ("code", "message")}
    if status in (429, 503) and details.get("retry_after") is None and "retry-after" in response.headers:
        details["retry_after"] = retry_after(response.headers)
    return error_class(code, status)(message, status=status, code=code, details=details)


def from_transport(exc: httpx.TransportError) -> TransportError:
    """httpx's exception as ours, named by type only (its text can hold the URL, and so a subject id)."""
    kind = Timeout if isinstance(exc, httpx.TimeoutException) else TransportError
    return kind(f"no answer from Carnet: {type(exc).__name__}", code="transport_error")
