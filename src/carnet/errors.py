"""Carnet's error tree. Every error a caller can see is a ``CarnetError``.

    CarnetError
    ├── InvalidInput              (400 invalid_input)        bad field value the schema could not catch
    │   └── InvalidBudget         (400 invalid_budget)
    ├── AuthError
    │   ├── Unauthenticated       (401 unauthenticated)       missing or unknown key
    │   └── Forbidden             (403 forbidden)             key lacks the role
    ├── NotFound
    │   ├── SubjectNotFound       (404 subject_not_found)
    │   └── MemoryNotFound        (404 memory_not_found)
    ├── Conflict                  (409 conflict)
    ├── StoreLocked               (409 store_locked)          the embedded shard is owned by another process
    ├── PayloadTooLarge           (413 payload_too_large)
    └── DependencyUnavailable     (503 dependency_unavailable)

The HTTP edge maps ``code`` and ``status`` in one handler (``carnet.api.errors``).
"""

from __future__ import annotations


class CarnetError(Exception):
    code = "internal_error"
    status = 500

    def __init__(self, message: str, **context: object) -> None:
        super().__init__(message)
        self.message = message
        self.context = context


class InvalidInput(CarnetError):
    code = "invalid_input"
    status = 400


class InvalidBudget(InvalidInput):
    code = "invalid_budget"


class AuthError(CarnetError):
    pass


class Unauthenticated(AuthError):
    code = "unauthenticated"
    status = 401


class Forbidden(AuthError):
    code = "forbidden"
    status = 403


class NotFound(CarnetError):
    code = "not_found"
    status = 404


class SubjectNotFound(NotFound):
    code = "subject_not_found"

    def __init__(self) -> None:
        # The subject id is personal data: never put it in an error message.
        super().__init__("no memories for this subject")


class MemoryNotFound(NotFound):
    code = "memory_not_found"

    def __init__(self, memory_id: str) -> None:
        super().__init__(f"memory {memory_id} not found", memory_id=memory_id)


class Conflict(CarnetError):
    code = "conflict"
    status = 409


class StoreLocked(CarnetError):
    code = "store_locked"
    status = 409


class PayloadTooLarge(CarnetError):
    code = "payload_too_large"
    status = 413


class DependencyUnavailable(CarnetError):
    code = "dependency_unavailable"
    status = 503
