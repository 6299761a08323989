"""Handing over raw messages: store them durably (sealed) and answer at once; a worker does the rest.

``submit`` does no extraction and calls no model: it validates, seals the messages under the
subject's data key and appends one row. That is the whole write path the assistant waits on, so its
latency does not depend on the LLM's.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from carnet.crypto.intake_sealer import IntakeSealer
from carnet.domain.idempotency import canonical, request_key
from carnet.domain.intake import Intake, IntakeStatus, Message, Payload, QueueStats
from carnet.domain.reconcile.values import DATETIME_MESSAGE, TEXT_MESSAGE, in_range, is_clean
from carnet.domain.records import Scope
from carnet.errors import IdempotencyKeyReused, IntakeNotFound, InvalidInput
from carnet.ports import IntakeStore
from carnet.services.needs import QueueNeeds
from carnet.services.scope import scope_for

MAX_MESSAGES = 200
ROLES = frozenset({"user", "assistant", "advisor", "system"})


class Bell:
    """Rung when intakes are queued or sent back to pending; the in-process workers listen (a worker in
    another process polls the store instead)."""

    def __init__(self) -> None:
        self._listeners: list[Callable[[], None]] = []

    def listen(self, listener: Callable[[], None]) -> None:
        self._listeners.append(listener)

    def ring(self) -> None:
        for listener in list(self._listeners):
            listener()


@dataclass(frozen=True, slots=True)
class IntakeQueue:
    """The queue and the sealer of its payloads, together: nothing reads a payload without both; and
    the bell that tells the workers of this process that there is work."""

    store: IntakeStore
    sealer: IntakeSealer
    bell: Bell = field(default_factory=Bell)

    def payload(self, intake: Intake) -> Payload:
        return self.sealer.open(Scope(intake.tenant, intake.subject), intake.id, intake.sealed)

    def opened(self, intake: Intake) -> Intake:
        """The intake with its session id readable (it is stored sealed)."""
        session = self.sealer.open_session(Scope(intake.tenant, intake.subject), intake.id, intake.session_id)
        return replace(intake, session_id=session)


def submit(deps: QueueNeeds, queue: IntakeQueue, *, tenant: str, subject_id: str, session_id: str | None,
           messages: Sequence[Message], idempotency_key: str | None, actor: str) -> Intake:
    """Store the intake (or, with an idempotency key already used for this subject, return the
    stored one: a retried POST never queues the conversation twice). The same key with another body
    (session id or messages) is refused with ``IdempotencyKeyReused``.

    At rest the key is only a keyed hash of ``request_key("messages", key)`` (the lookup compares
    hashes) and the session id is sealed under the subject's data key."""
    _validate(deps, messages)
    scope = scope_for(deps, tenant, subject_id)
    intake_id = str(uuid.uuid4())
    now = deps.clock.now()
    key_token = fingerprint = None
    if idempotency_key is not None:
        key_token = deps.hasher.request_token(tenant, "intake-key:" + request_key("messages", idempotency_key))
        fingerprint = deps.hasher.request_token(tenant, "intake-body:" + _body(session_id, messages))
    # Under the subject's lock, as every write of it: an erasure then comes wholly before (the intake
    # goes with the subject) or wholly after, never between the registration and the sealing.
    with deps.locks.for_scope(scope):
        deps.subjects.ensure(scope, subject_id)
        sealed = queue.sealer.seal(scope, intake_id, Payload(subject_id, tuple(messages)))
        stored = queue.store.add(Intake(
            id=intake_id, tenant=tenant, subject=scope.subject, status=IntakeStatus.PENDING, created_at=now,
            updated_at=now, session_id=queue.sealer.seal_session(scope, intake_id, session_id),
            idempotency_key=key_token, actor=actor, sealed=sealed, fingerprint=fingerprint,
            session_key=session_key(deps, tenant, scope.subject, session_id)))
    if stored.id != intake_id and stored.fingerprint is not None and stored.fingerprint != fingerprint:
        raise IdempotencyKeyReused()
    return queue.opened(stored)


def session_key(deps: QueueNeeds, tenant: str, subject: str, session_id: str | None) -> str | None:
    """A keyed hash of the member's session id: the worker finds the session's earlier intakes by it
    (their context) while the id itself stays sealed."""
    if session_id is None:
        return None
    return deps.hasher.request_token(tenant, f"intake-session:{subject}:{session_id}")


def _body(session_id: str | None, messages: Sequence[Message]) -> str:
    return canonical({"session_id": session_id, "messages": [
        canonical({"role": m.role, "content": m.content, "at": m.at.isoformat() if m.at else None})
        for m in messages]})


@dataclass(frozen=True, slots=True)
class QueueState:
    """A tenant's part of the queue: its counts and its latest dead letters (no payload, no subject id)."""

    stats: QueueStats
    dead: list[Intake]


def queue_state(queue: IntakeQueue, *, tenant: str, limit: int = 100) -> QueueState:
    return QueueState(queue.store.stats(tenant), queue.store.dead(tenant, limit=limit))


def retry_dead(deps: QueueNeeds, queue: IntakeQueue, *, tenant: str, intake_id: str | None = None) -> int:
    """The tenant's dead intakes (or one of them) back to pending with a fresh attempt count; how many.
    Another tenant's intake id matches nothing."""
    return queue.store.retry_dead(tenant=tenant, intake_id=intake_id, now=deps.clock.now())


def status(queue: IntakeQueue, *, tenant: str, intake_id: str) -> Intake:
    """The tenant's intake; another tenant's is not found, like an unknown one."""
    found = queue.store.get(tenant, intake_id)
    if found is None:
        raise IntakeNotFound(intake_id)
    return queue.opened(found)


def check_messages(deps: QueueNeeds, messages: Sequence[Message]) -> None:
    """What ``submit`` refuses (``InvalidInput``), checked without writing anything (the door runs it
    before the audit entry)."""
    _validate(deps, messages)


def _validate(deps: QueueNeeds, messages: Sequence[Message]) -> None:
    if not messages:
        raise InvalidInput("no message to take in")
    if len(messages) > MAX_MESSAGES:
        raise InvalidInput(f"at most {MAX_MESSAGES} messages per intake")
    for n, m in enumerate(messages):
        if m.role not in ROLES:
            raise InvalidInput(f"message {n}: role must be one of {', '.join(sorted(ROLES))}", index=n)
        if not m.content.strip():
            raise InvalidInput(f"message {n}: content is empty", index=n)
        if len(m.content) > deps.limits.max_text_chars:
            raise InvalidInput(f"message {n}: content is longer than {deps.limits.max_text_chars} characters",
                               index=n)
        if m.at is not None and m.at.tzinfo is None:
            raise InvalidInput(f"message {n}: 'at' needs a time zone", index=n)
        if m.at is not None and not in_range(m.at):
            raise InvalidInput(f"message {n}: 'at' {DATETIME_MESSAGE}", index=n)
        if not is_clean(m.content):
            raise InvalidInput(f"message {n}: content {TEXT_MESSAGE}", index=n)
