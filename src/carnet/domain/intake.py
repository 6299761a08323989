"""Intakes: raw conversation messages handed over by an assistant, kept until a worker has turned them
into memories. Pure types and the retry schedule; storage is the ``IntakeStore`` port.

Life of an intake::

    pending ──lease──▶ processing ──▶ done (memory ids)
       ▲                   │
       ├──retry (backoff)──┤ (extractor failed, attempts left)
       └──retry (outage)───┤ (a dependency was down: the attempt does not count)
                           └──▶ dead (reason)  ──`carnet intakes retry`──▶ pending

A worker holds an intake under a lease; a worker that dies lets the lease expire and another takes
the intake up. Intakes of one subject are processed in order, one at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum

from carnet.domain.extraction.model import Extraction


class IntakeStatus(StrEnum):
    PENDING = "pending"
    PROCESSING = "processing"
    DONE = "done"
    DEAD = "dead"


@dataclass(frozen=True, slots=True)
class Message:
    role: str  # "user" (the member, via the advisor), "assistant", "advisor", "system"
    content: str
    at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Intake:
    id: str
    tenant: str
    subject: str  # keyed hash, as everywhere
    status: IntakeStatus
    created_at: datetime
    updated_at: datetime
    session_id: str | None = None  # at rest: sealed under the subject's data key (``IntakeSealer``)
    idempotency_key: str | None = None  # at rest: a keyed hash of the namespaced key, never the key
    attempts: int = 0
    reason: str | None = None  # why it is dead, or why the last attempt failed (a code, never text)
    memory_ids: tuple[str, ...] = ()
    next_attempt_at: datetime | None = None
    lease_owner: str | None = None
    lease_until: datetime | None = None
    actor: str = ""  # the API key id that handed it over
    sealed: bytes = field(default=b"", repr=False)  # the messages, sealed under the subject's data key
    fingerprint: str | None = None  # keyed hash of the body sent with an idempotency key (reuse detection)
    # A keyed hash of the session id: finds the session's earlier intakes without opening any seal.
    session_key: str | None = None
    # Done, its messages kept (sealed) until then as the context of the session's next intakes.
    context_until: datetime | None = None


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Failures of the intake's own (the extractor failed or answered out of schema, a bug) count toward
    ``max_attempts`` and back off exponentially. A failure because a dependency was down (KMS, audit
    trail, vector store, a subject's lock held too long) is not the intake's: it does not count, and the
    intake is tried again every ``outage_seconds`` until the dependency is back, so that an outage longer
    than the backoff's budget dead-letters nothing; only ``outage_max_seconds`` after it was received
    (a day: no outage lasts that long, a failure that does is the intake's) does it go to the dead letter."""

    max_attempts: int = 5
    base_seconds: float = 2.0
    max_seconds: float = 300.0
    outage_seconds: float = 10.0
    outage_max_seconds: float = 86400.0

    def next_attempt(self, attempts: int, now: datetime) -> datetime | None:
        """When to try again after ``attempts`` failed attempts; None: give up (dead letter)."""
        if attempts >= self.max_attempts:
            return None
        return now + timedelta(seconds=min(self.max_seconds, self.base_seconds * 2 ** (attempts - 1)))

    def after_outage(self, received: datetime, now: datetime) -> datetime | None:
        """When to try again an intake received at ``received`` whose attempt a dependency's outage cut
        short; None: it has waited ``outage_max_seconds`` already (dead letter)."""
        if now - received >= timedelta(seconds=self.outage_max_seconds):
            return None
        return now + timedelta(seconds=self.outage_seconds)


@dataclass(frozen=True, slots=True)
class QueueStats:
    pending: int
    processing: int
    dead: int
    oldest_pending_at: datetime | None


@dataclass(frozen=True, slots=True)
class Payload:
    """What an intake carries, sealed: the subject id (the worker needs it to remember, and it is
    personal data), the messages, and once extracted, the extraction to apply."""

    subject_id: str
    messages: tuple[Message, ...]
    extraction: Extraction | None = None
