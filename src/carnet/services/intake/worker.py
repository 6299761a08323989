"""Workers: turn queued intakes into memories, never losing one and never applying one twice.

One pass (``Worker.run_once``) leases due intakes (at most one per subject, each subject's oldest
first), and for each:

1. opens the sealed payload (subject id, messages);
2. unless an earlier attempt already staged it, pseudonymises the messages (the extractor, an LLM or
   rules, sees placeholders only), extracts, puts the values back into the facts, and stages the
   extraction in the intake (sealed): a retry after a crash applies the same facts again instead of
   asking the model anew;
3. remembers the facts and the episode with idempotency keys derived from the intake id and the
   fact's rank, so applying the same intake twice changes nothing the second time;
4. marks it done with the memory ids, dropping the payload; an intake of a session keeps it, sealed,
   for ``context_minutes``: the session's next intakes are read after its messages (a call posted
   exchange by exchange is read as one call: the question in one post, its answer in the next), and
   a pass drops what has expired. An erasure deletes them with the subject's other intakes.

A failure sends the intake back to pending with exponential backoff (``RetryPolicy``), then to the
dead letter with a reason code once its attempts are spent; an input the store refuses for good (a
fact over the size limit…) goes there at once. A worker that dies holds nothing: its lease expires
and another worker (or the restarted server) takes the intake up.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import timedelta

import structlog

from carnet.domain.extraction.model import ExtractedFact, Extraction
from carnet.domain.intake import Intake, Message, Payload, RetryPolicy
from carnet.domain.pii.pseudonyms import PLACEHOLDER
from carnet.domain.procedures import Stated, stated_procedures
from carnet.domain.reconcile.values import in_range
from carnet.domain.records import Kind, Scope, Source
from carnet.errors import CarnetError, DependencyUnavailable, ExtractionFailed, InvalidInput
from carnet.ports import Extractor
from carnet.services import pii
from carnet.services.audit import AuditTrail
from carnet.services.deps import Deps
from carnet.services.intake.queue import IntakeQueue
from carnet.services.memories.judge import supersede_obsolete
from carnet.services.memories.remember import NewMemory, Outcome, remember
from carnet.services.resilient import Resilient

log = structlog.get_logger(__name__)

MAX_CONTEXT = 200  # the most earlier messages of a session read before an intake's (an intake's own limit)
_EXPIRE_EVERY_SECONDS = 60.0


# (tenant, the member's keyed hash, the advisor's statements as pseudonymised)
ProposeStated = Callable[[str, str, Sequence[Stated]], object]


@dataclass(frozen=True, slots=True)
class WorkerHooks:
    """What the metrics want to know; no-ops by default."""

    extracted: Callable[[str, float, Extraction | None], None] = lambda outcome, seconds, extraction: None
    finished: Callable[[str, Intake], None] = lambda outcome, intake: None  # done, retry, dead
    context: Callable[[int], None] = lambda messages: None  # a session's earlier messages read before an intake's


class Worker:
    def __init__(self, deps: Deps, queue: IntakeQueue, extractor: Extractor, audit: AuditTrail, *, owner: str,
                 policy: RetryPolicy | None = None, lease_seconds: float = 120.0,
                 hooks: WorkerHooks | None = None, guard: Resilient | None = None,
                 propose: ProposeStated | None = None, context_minutes: float = 0.0) -> None:
        """``propose``: where an advisor's statements of a standing way of handling a case go (the
        facade's ``propose_extracted``: proposed team procedures, for a supervisor to review).
        ``context_minutes``: how long a session's messages stay as the context of its next intakes
        (0: none kept)."""
        self.context_minutes = context_minutes
        self._expired_at: float | None = None  # monotonic time of the last pass that dropped expired contexts
        self.deps, self.queue, self.extractor, self.audit = deps, queue, extractor, audit
        self.propose = propose
        self.guard = guard or Resilient("lease")  # the heartbeat threads' edge
        self.owner = owner
        self.policy = policy or RetryPolicy()
        self.lease_seconds = lease_seconds
        self.hooks = hooks or WorkerHooks()

    def run_once(self, *, limit: int = 1) -> int:
        """Lease and process up to ``limit`` due intakes; how many were taken."""
        self._expire_context()
        taken = self.queue.store.lease(owner=self.owner, now=self.deps.clock.now(), seconds=self.lease_seconds,
                                       limit=limit)
        for intake in taken:
            self.process(intake)
        return len(taken)

    def process(self, intake: Intake) -> None:
        try:
            ids = self._apply(intake)
        except ExtractionFailed as exc:
            self._fail(intake, str(exc.context.get("reason", exc.code)), permanent=False)
        except InvalidInput as exc:
            self._fail(intake, exc.code, permanent=True)
        except DependencyUnavailable as exc:  # not the intake's fault: tried again, uncounted, until it is back
            self._outage(intake, exc.code)
        except CarnetError as exc:
            self._fail(intake, exc.code, permanent=False)
        except Exception as exc:  # a bug must not kill the worker: count it as an attempt, keep its type
            log.error("intake_unexpected_error", intake_id=intake.id, error_type=type(exc).__name__)
            self._fail(intake, "internal_error", permanent=False)
        else:
            now = self.deps.clock.now()
            keep = (now + timedelta(minutes=self.context_minutes)
                    if self.context_minutes > 0 and intake.session_key is not None else None)
            if self.queue.store.complete(intake.id, owner=self.owner, memory_ids=ids, now=now, keep_until=keep):
                self.hooks.finished("done", intake)
            else:
                log.warning("intake_lease_lost", intake_id=intake.id)

    def _apply(self, intake: Intake) -> list[str]:
        scope = Scope(intake.tenant, intake.subject)
        intake = self.queue.opened(intake)  # its session id is stored sealed
        payload = self.queue.payload(intake)
        extraction = payload.extraction
        seen: pii.Extracting
        if extraction is None:
            with self._heartbeat(intake):  # an LLM may take longer than a lease: keep it while it works
                extraction, seen = self._extract(scope, payload, intake.session_id, self._context(intake))
            staged = self.queue.sealer.reseal(scope, intake.id, replace(payload, extraction=extraction),
                                              like=intake.sealed)
            if not self.queue.store.stage(intake.id, owner=self.owner, sealed=staged):
                raise DependencyUnavailable("the intake's lease was lost")
            self.queue.store.renew(intake.id, owner=self.owner,
                                   until=self.deps.clock.now() + timedelta(seconds=self.lease_seconds))
        else:  # staged by an earlier attempt: only the values the call holds are read again
            seen = pii.for_extraction(self.deps.pii, scope, [m.content for m in payload.messages])
        found = seen.found
        items = _memories(intake, payload.messages, extraction)
        stated = _stated(payload.messages, seen.pseudo)
        if not items and not found and not stated:
            return []
        # Under the subject's lock, and only if the intake is still ours: an erasure (which deletes the
        # subject's intakes under the same lock) can then never be followed by this intake's memories,
        # nor by the pseudonym map's growth (nor, so, by a new data key).
        with self.deps.locks.for_scope(scope):
            if not self.queue.store.renew(intake.id, owner=self.owner,
                                          until=self.deps.clock.now() + timedelta(seconds=self.lease_seconds)):
                raise DependencyUnavailable("the intake's lease was lost")
            pii.grow(self.deps.pii, scope, found)
            self._propose_stated(scope, stated)  # under the lock: an erasure deletes what it proposed
            if not items:
                return []
            event = self.audit.event(tenant=intake.tenant, actor=intake.actor, action="intake.apply",
                                     subject=intake.subject, targets=(intake.id,), detail={"count": len(items)})
            with self.audit.recorded(event):
                outcomes = remember(self.deps, tenant=intake.tenant, subject_id=payload.subject_id, items=items,
                                    actor=intake.actor)
                if self.extractor.judges_contradictions:
                    self._judge(scope, outcomes, intake)
        return list(dict.fromkeys(o.memory.id for o in outcomes))

    def _propose_stated(self, scope: Scope, stated: Sequence[Stated]) -> None:
        """Proposals only: a failure here is logged (by code) and never fails the intake. Each is
        proposed with the member's keyed hash as its origin, so the member's erasure deletes it."""
        if self.propose is None or not stated:
            return
        try:
            self.propose(scope.tenant, scope.subject, stated)
        except CarnetError as exc:
            log.warning("procedure_proposal_failed", error=exc.code)

    def _judge(self, scope: Scope, outcomes: Sequence[Outcome], intake: Intake) -> None:
        """The model's contradiction judgment is a refinement after reconcile's rules: if it fails,
        the facts are already stored and the intake is done; a later intake of the subject is judged
        against them again."""
        try:
            supersede_obsolete(self.deps, self.extractor, scope, outcomes, actor=intake.actor)
        except ExtractionFailed as exc:
            log.warning("contradiction_judgment_failed", intake_id=intake.id, reason=exc.context.get("reason"))
            self.hooks.extracted("judgment_failed", 0.0, None)

    @contextmanager
    def _heartbeat(self, intake: Intake) -> Iterator[None]:
        """Renew the lease every third of its length until the block ends."""
        done = threading.Event()

        def beat() -> None:
            while not done.wait(self.lease_seconds / 3):
                until = self.deps.clock.now() + timedelta(seconds=self.lease_seconds)
                try:
                    if not self.queue.store.renew(intake.id, owner=self.owner, until=until):
                        return
                except Exception as exc:  # the queue is away: the lease may lapse, the staged work is still safe
                    self.guard.failed(exc)
                    continue

        thread = threading.Thread(target=beat, name=f"carnet-lease-{intake.id[:8]}", daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()

    def _context(self, intake: Intake) -> tuple[Message, ...]:
        """The messages of the session's earlier intakes still kept, oldest first, at most ``MAX_CONTEXT``.
        One that cannot be opened (a damaged row, a destroyed key) is left out: the intake is read
        without it, as without a session."""
        if self.context_minutes <= 0 or intake.session_key is None:
            return ()
        messages: list[Message] = []
        for earlier in self.queue.store.session_context(intake.tenant, intake.subject, intake.session_key,
                                                        now=self.deps.clock.now()):
            if earlier.id == intake.id or not earlier.sealed or earlier.created_at > intake.created_at:
                continue  # a later post applied first (this one was dead-lettered, then retried) is no context
            try:
                messages.extend(self.queue.payload(earlier).messages)
            except DependencyUnavailable:
                raise
            except (CarnetError, ValueError, KeyError, TypeError) as exc:
                log.warning("intake_context_unreadable", intake_id=intake.id, error_type=type(exc).__name__)
        self.hooks.context(min(len(messages), MAX_CONTEXT))
        return tuple(messages[-MAX_CONTEXT:])

    def _expire_context(self) -> None:
        """At most once a minute per worker: drop the sessions' contexts whose time has passed."""
        if self._expired_at is not None and time.monotonic() - self._expired_at < _EXPIRE_EVERY_SECONDS:
            return
        self._expired_at = time.monotonic()
        dropped = self.queue.store.expire_context(self.deps.clock.now())
        if dropped:
            log.info("intake_context_expired", count=dropped)

    def _extract(self, scope: Scope, payload: Payload, session_id: str | None,
                 context: Sequence[Message] = ()) -> tuple[Extraction, pii.Extracting]:
        """The extraction, and the call as pseudonymised (its values for ``pii.grow`` under the lock);
        ``context``: the session's earlier messages, read before the call's, pseudonymised with it in one
        pass (one numbering of placeholders; their values are already in the subject's map, so growing
        it with them again changes nothing; a fact that quotes one gets it back too)."""
        both = pii.for_extraction(self.deps.pii, scope, [m.content for m in (*context, *payload.messages)])
        seen = pii.Extracting(both.pseudo[len(context):], both.back, both.found)
        back = seen.back
        messages = [Message(m.role, text, m.at) for m, text in zip(payload.messages, seen.pseudo, strict=True)]
        before = [Message(m.role, text, m.at) for m, text in zip(context, both.pseudo[:len(context)], strict=True)]
        started = time.perf_counter()
        try:
            found = self.extractor.extract(messages, session_id=session_id, locale=self.deps.locale, context=before)
        except ExtractionFailed:
            self.hooks.extracted("failed", time.perf_counter() - started, None)
            raise
        self.hooks.extracted("ok", time.perf_counter() - started, found)
        return (replace(found, facts=tuple(replace(f, text=pii.restore(f.text, back)) for f in found.facts),
                        episode=pii.restore(found.episode, back) if found.episode else None), seen)

    def _outage(self, intake: Intake, reason: str) -> None:
        now = self.deps.clock.now()
        retry_at = self.policy.after_outage(intake.created_at, now)
        if retry_at is None:
            self._fail(intake, reason, permanent=True)
        elif self.queue.store.fail(intake.id, owner=self.owner, reason=reason, now=now, retry_at=retry_at,
                                   counted=False):
            self.hooks.finished("retry", intake)
            log.warning("intake_failed", intake_id=intake.id, reason=reason, attempts=intake.attempts - 1,
                        dead=False, counted=False)

    def _fail(self, intake: Intake, reason: str, *, permanent: bool) -> None:
        now = self.deps.clock.now()
        retry_at = None if permanent else self.policy.next_attempt(intake.attempts, now)
        if self.queue.store.fail(intake.id, owner=self.owner, reason=reason, now=now, retry_at=retry_at):
            self.hooks.finished("retry" if retry_at else "dead", intake)
            log.warning("intake_failed", intake_id=intake.id, reason=reason, attempts=intake.attempts,
                        dead=retry_at is None)


def _stated(messages: Sequence[Message], pseudo: Sequence[str]) -> list[Stated]:
    """The advisor's statements of a team procedure, read from the pseudonymised turns (the same
    detection and subject's map as the memories): one in which a value was replaced names someone and
    is dropped; the others are kept as the pseudonymised text (issue 46)."""
    said = [text for m, text in zip(messages, pseudo, strict=True) if m.role == "advisor"]
    return [s for s in stated_procedures(said) if not PLACEHOLDER.search(s.text)]


def _memories(intake: Intake, messages: Sequence[Message], extraction: Extraction) -> list[NewMemory]:
    """Facts and episode as memories, each with an idempotency key naming the intake and its rank."""
    last_at = max((m.at for m in messages if m.at), default=None)
    source = (Source("intake", intake.id, intake.session_id),)

    def item(f: ExtractedFact, key: str) -> NewMemory:
        # An extractor's date outside the domain's range (an LLM can say 9999-12-31) is no date.
        at = f.valid_from if f.valid_from is not None and in_range(f.valid_from) else last_at
        return NewMemory(text=f.text, kind=f.kind, occurred_at=at, importance=f.importance,
                         category=f.category, idempotency_key=f"intake:{intake.id}:{key}", sources=source,
                         session_id=intake.session_id)

    items = [item(f, str(n)) for n, f in enumerate(extraction.facts) if f.text.strip()]
    if extraction.episode:
        items.append(item(ExtractedFact(extraction.episode, "episode", 0.4, None, Kind.EPISODE), "episode"))
    return items


class WorkerPool:
    """In-process workers (``carnet serve`` on the embedded store, or ``carnet worker``): threads that
    poll the queue, and wake at once when ``wake()`` says an intake was just queued. Whatever a pass
    raises (the queue away, a bug), the thread logs its type, counts it and polls again after a
    backoff (``services.resilient``); the intake it held goes back to pending when its lease lapses."""

    def __init__(self, make: Callable[[int], Worker], *, threads: int = 2, poll_seconds: float = 0.5,
                 guard: Resilient | None = None) -> None:
        self._workers = [make(n) for n in range(threads)]
        self._poll = poll_seconds
        self.guard = guard or Resilient("worker", base_seconds=poll_seconds, max_seconds=max(60.0, poll_seconds))
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._threads: list[threading.Thread] = []

    def wake(self) -> None:
        self._wake.set()

    def start(self) -> None:
        for w in self._workers:
            t = threading.Thread(target=self._loop, args=(w,), name=f"carnet-worker-{w.owner}", daemon=True)
            t.start()
            self._threads.append(t)

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._wake.set()
        for t in self._threads:
            t.join(timeout=timeout)
        self._threads = []

    def errors(self) -> int:
        """Passes and lease renewals that raised, across this pool's threads."""
        return self.guard.errors + sum(w.guard.errors for w in self._workers)

    def _loop(self, worker: Worker) -> None:
        taken: list[int] = []
        while not self._stop.is_set():
            taken.clear()
            if not self.guard.run(lambda: taken.append(worker.run_once())):
                self._stop.wait(self.guard.backoff())
            elif not taken[0]:
                self._wake.wait(self._poll)
                self._wake.clear()


def owner_name(prefix: str, n: int) -> str:
    """A lease owner unique across hosts, processes and threads (``worker:host:pid:n``)."""
    return f"{prefix}:{socket.gethostname()}:{os.getpid()}:{n}"
