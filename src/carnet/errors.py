"""Carnet's error tree. Every error a caller can see is a ``CarnetError``.

    CarnetError
    ├── InvalidInput              (400 invalid_input)        bad field value the schema could not catch
    │   ├── InvalidBudget         (400 invalid_budget)
    │   ├── ProcedureHasPersonalData (400 procedure_personal_data) a team procedure naming someone
    │   └── BackupCorrupt         (400 backup_corrupt)       an archive whose checksums or layout do not match
    ├── AuthError
    │   ├── Unauthenticated       (401 unauthenticated)       missing or unknown key
    │   └── Forbidden             (403 forbidden)             key lacks the role
    ├── NotFound
    │   ├── SubjectNotFound       (404 subject_not_found)
    │   ├── MemoryNotFound        (404 memory_not_found)
    │   ├── IntakeNotFound        (404 intake_not_found)
    │   └── ProcedureNotFound     (404 procedure_not_found)
    ├── MemoryUnreadable          (410 memory_unreadable)    the record is stored but cannot be decoded or opened
    ├── Conflict                  (409 conflict)
    │   └── LegalHold             (409 legal_hold)            erasure refused while the subject is under legal hold
    │   └── RestoreRefused        (409 restore_refused)      a restore would be wrong (backup older than a rehash…)
    │   └── ProcedureState        (409 procedure_state)      that decision does not apply to the procedure's status
    │   └── NotSuperseded         (409 not_superseded)       only a superseded record can be restored
    ├── IdempotencyKeyReused      (422 idempotency_key_reused) the Idempotency-Key was used with another body
    ├── StoreLocked               (409 store_locked)          the embedded shard is owned by another process
    ├── PayloadTooLarge           (413 payload_too_large)
    ├── RequestTimeout            (408 request_timeout)      the body did not arrive within its deadline
    ├── HeadersTooLarge           (431 headers_too_large)    too many request headers, or too long
    ├── MalformedRequest          (400 malformed_request)    not parseable HTTP (answered by the server protocol)
    ├── MethodNotAllowed          (405 method_not_allowed)   e.g. GET /mcp: no event stream is offered
    ├── RateLimited               (429 rate_limited)         the key spent its request budget; see Retry-After
    ├── Overloaded                (503 overloaded)           at capacity: nothing ran; see Retry-After
    ├── LedgerCorrupt             (500 ledger_corrupt)       the erasure ledger has a malformed line
    ├── ExtractionFailed          (502 extraction_failed)    the extractor (LLM) failed or answered out of schema
    ├── KmsRejected               (500 kms_rejected)         the KMS refused: missing key, bad version…
    │   └── UnwrapFailed          (500 key_unwrap_failed)    a wrapped key does not open (tampered, foreign, retired)
    └── DependencyUnavailable     (503 dependency_unavailable)
        ├── KmsUnavailable        (503 kms_unavailable)      KMS/HSM down, sealed, or our credentials no longer work
        │   └── KmsDenied         (503 kms_unavailable)      credentials or policy refused (401/403, PIN refused)
        ├── AuditUnavailable      (503 audit_unavailable)    the audit trail cannot be written: the write is refused
        ├── EmbedderUnavailable   (503 embedder_unavailable) the embedding server down, slow or refusing us, or its
        │                                                    circuit open (then with Retry-After)
        └── SubjectBusy           (503 subject_busy)         a subject's lock held past the lock timeout

The HTTP edge maps ``code`` and ``status`` in one handler (``carnet.entrypoints.http.errors``).
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


class MemoryUnreadable(CarnetError):
    """The record exists but cannot be read back: its payload is damaged, its ciphertext does not
    open, or its subject's data key is damaged or gone. ``reason`` is a code of
    :mod:`carnet.domain.unreadable`. It can still be forgotten (or its subject erased): neither
    needs to decrypt it."""

    code = "memory_unreadable"
    status = 410

    def __init__(self, memory_id: str, reason: str) -> None:
        super().__init__(f"memory {memory_id} cannot be read ({reason})", memory_id=memory_id, reason=reason)


class IntakeNotFound(NotFound):
    code = "intake_not_found"

    def __init__(self, intake_id: str) -> None:
        super().__init__(f"intake {intake_id} not found", intake_id=intake_id)


class ProcedureNotFound(NotFound):
    code = "procedure_not_found"

    def __init__(self, procedure_id: str) -> None:
        super().__init__(f"procedure {procedure_id} not found", procedure_id=procedure_id)


class ProcedureHasPersonalData(InvalidInput):
    """A team procedure is shown in every member's context: a text naming someone (a name, an IBAN, a
    phone number…) is refused. ``kinds`` says what was found, never the value."""

    code = "procedure_personal_data"

    def __init__(self, kinds: tuple[str, ...]) -> None:
        super().__init__("a team procedure may not contain personal data", kinds=list(kinds))


class Conflict(CarnetError):
    code = "conflict"
    status = 409


class ProcedureState(Conflict):
    """Approve and reject apply to a proposed procedure, retire to an approved one."""

    code = "procedure_state"

    def __init__(self, procedure_id: str, status: str, decision: str) -> None:
        super().__init__(f"procedure {procedure_id} is {status}: {decision!r} does not apply to it",
                         procedure_id=procedure_id, status=status)


class NotSuperseded(Conflict):
    """A restore asked of a record that is not superseded (active, expired): nothing to undo."""

    code = "not_superseded"

    def __init__(self, memory_id: str, status: str) -> None:
        super().__init__(f"memory {memory_id} is {status}: only a superseded record can be restored",
                         memory_id=memory_id, status=status)


class RestoreRefused(Conflict):
    """A restore that would leave a wrong store: the backup predates a rehash of a tenant, or the key
    store does not hold the keys the backup needs."""

    code = "restore_refused"


class BackupCorrupt(InvalidInput):
    """The archive does not match its manifest (a member altered, missing or added) or is no Carnet backup."""

    code = "backup_corrupt"


class LedgerCorrupt(CarnetError):
    """A line of the erasure ledger cannot be read: a restore must not guess which erasures it held."""

    code = "ledger_corrupt"


class LegalHold(Conflict):
    """GDPR art. 17(3)(e): erasure does not apply while the data is needed for legal claims. Lift the
    hold first (an explicit, audited act), then erase."""

    code = "legal_hold"

    def __init__(self) -> None:
        super().__init__("the subject is under legal hold: lift the hold before erasing")


class IdempotencyKeyReused(CarnetError):
    """The ``Idempotency-Key`` names an earlier request whose body was different (IETF httpapi
    idempotency-key draft: 422). Nothing was written; neither the key nor the body is echoed."""

    code = "idempotency_key_reused"
    status = 422

    def __init__(self) -> None:
        super().__init__("this Idempotency-Key was already used with a different request body")


class StoreLocked(CarnetError):
    code = "store_locked"
    status = 409


class PayloadTooLarge(CarnetError):
    code = "payload_too_large"
    status = 413


class RequestTimeout(CarnetError):
    """The request's body did not arrive within ``CARNET_API__BODY_READ_DEADLINE_MS``
    (``carnet.entrypoints.http.body_limit``): nothing of it ran, and the connection is closed."""

    code = "request_timeout"
    status = 408


class HeadersTooLarge(CarnetError):
    code = "headers_too_large"
    status = 431


class MalformedRequest(CarnetError):
    code = "malformed_request"
    status = 400


class MethodNotAllowed(CarnetError):
    code = "method_not_allowed"
    status = 405


class RateLimited(CarnetError):
    code = "rate_limited"
    status = 429

    def __init__(self, retry_after: float) -> None:
        super().__init__("too many requests for this API key", retry_after=max(1, round(retry_after + 0.5)))


class Overloaded(CarnetError):
    """The process is at capacity: the request waited its deadline for a slot, or the waiting room was
    full (``carnet.entrypoints.http.admission``). Nothing of it ran, so any request may be sent again
    after ``retry_after``."""

    code = "overloaded"
    status = 503

    def __init__(self, retry_after: int = 1) -> None:
        super().__init__("the server is at capacity; retry later", retry_after=max(1, retry_after))


class DependencyUnavailable(CarnetError):
    code = "dependency_unavailable"
    status = 503


class ExtractionFailed(CarnetError):
    """The extractor failed: the LLM server errored, timed out, or answered out of schema. The intake
    is retried with backoff, then dead-lettered with ``reason`` (a short code, never the answer's text)."""

    code = "extraction_failed"
    status = 502

    def __init__(self, reason: str) -> None:
        super().__init__(f"extraction failed: {reason}", reason=reason)


class KmsRejected(CarnetError):
    """The KMS (Transit, HSM or dev file) refused a request for another reason than availability."""

    code = "kms_rejected"
    status = 500


class UnwrapFailed(KmsRejected):
    """A wrapped data key does not open under its tenant's key (tampered, foreign or retired)."""

    code = "key_unwrap_failed"


class KmsUnavailable(DependencyUnavailable):
    """The KMS cannot serve us now: down, sealed, overloaded, or our credentials no longer work."""

    code = "kms_unavailable"


class KmsDenied(KmsUnavailable):
    """The KMS refused our credentials or policy (HTTP 401/403, a refused PIN)."""


class AuditUnavailable(DependencyUnavailable):
    """The audit trail refused an entry: the operation it records does not happen."""

    code = "audit_unavailable"


class EmbedderUnavailable(DependencyUnavailable):
    """The embedding server (``CARNET_EMBEDDER=remote``) gave no vectors: ``reason`` is a short code
    (``timeout``, ``connect``, ``tls``, ``server_error``, ``unauthorized``, ``rejected``, ``bad_answer``,
    ``model_mismatch``, ``circuit_open``), never a text; ``retry_after`` when the circuit is open."""

    code = "embedder_unavailable"

    def __init__(self, reason: str, *, retry_after: float | None = None) -> None:
        extra: dict[str, object] = {} if retry_after is None else {"retry_after": max(1, round(retry_after + 0.5))}
        super().__init__(f"the embedding server is unavailable ({reason})", reason=reason, **extra)


class SubjectLockLost(DependencyUnavailable):
    """The subject's lock ended under the write that held it (its PostgreSQL session closed: a
    database restart, a dropped connection), so another process may have written or erased the
    subject since: the write stops before it creates anything outside the database; retry it."""

    code = "subject_lock_lost"

    def __init__(self) -> None:
        super().__init__("the subject's lock was lost during the write; retry it", retry_after=1)


class UnlockedWrite(CarnetError):
    """A defect, never a client's error: a data key was about to be created by code that does not hold
    the subject's lock. Only a write that held the lock from its start may create a subject's key;
    anything else could re-create the key of a subject erased meanwhile."""

    code = "internal_error"

    def __init__(self) -> None:
        super().__init__("a subject's data key was about to be created outside the subject's lock")


class SubjectBusy(DependencyUnavailable):
    """Another process held the subject's lock longer than the lock timeout (an erasure or a long
    intake): nothing was written; retry after ``retry_after`` seconds."""

    code = "subject_busy"

    def __init__(self, retry_after: float = 1.0) -> None:
        super().__init__("the subject is being written by another process; retry later",
                         retry_after=max(1, round(retry_after + 0.5)))
