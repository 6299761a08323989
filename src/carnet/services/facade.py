"""The in-process facade: every use case as a caller (a ``Principal``) may run it. REST, MCP, the CLI (as a
local ``operator``), the scheduler and the Python API all go through here, so what every call needs cannot be
forgotten by an entrypoint: each method passes through the ``Door`` (the role, the action's rules such as an
unknown subject or a legal hold, then the audit entry: writes recorded before they happen, reads queued, a
refusal recorded once), and the caller's special-category policy applies. Key and audit-trail administration
is ``self.admin``, behind the same door. The tenant always comes from the principal, never the request."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from carnet.domain.audit import DetailValue
from carnet.domain.intake import Intake, Message
from carnet.domain.records import HistoryEntry, Kind, Memory, RetentionClass, Scope, Status
from carnet.domain.retention import SubjectRetention
from carnet.domain.scoring import Weights
from carnet.domain.unreadable import Found, Unreadable
from carnet.errors import InvalidInput, LegalHold, MemoryUnreadable, SubjectNotFound
from carnet.ports import ContradictionJudge, RecordFilter, TeamProcedures
from carnet.services import apikeys
from carnet.services import procedures as team
from carnet.services.admin import Admin
from carnet.services.apikeys import Principal
from carnet.services.audit import AuditTrail
from carnet.services.backup.snapshots import BackupReport
from carnet.services.deps import Deps
from carnet.services.door import Door
from carnet.services.facade_procedures import ProcedureUseCases
from carnet.services.intake import queue as intake
from carnet.services.intake.queue import IntakeQueue
from carnet.services.lifecycle.maintain import MaintainReport, Progress, StopFlag, maintain, record_audit
from carnet.services.memories import reads as memories
from carnet.services.memories import recall
from carnet.services.memories.assemble import Budgets, Context, assemble, budgets
from carnet.services.memories.corrections import CorrectionKeeper
from carnet.services.memories.judge import remember_judged
from carnet.services.memories.readable import for_reader, readable_intake
from carnet.services.memories.remember import NewMemory, Outcome, check_items, remember
from carnet.services.memories.restore import Restored, check_reason, check_restorable, restore
from carnet.services.rights import export as export_service
from carnet.services.rights import rectify, retention
from carnet.services.rights.erase import ErasureReceipt, erase_subject
from carnet.services.roles import ADMIN, AGENT, DPO, SUPERVISOR
from carnet.services.scope import scope_for

Observe = Callable[[str, str, list[float]], None]  # (tenant, operation, scores returned)


class Facade(ProcedureUseCases):
    def __init__(self, deps: Deps, audit: AuditTrail, queue: IntakeQueue, *, pepper: bytes,
                 procedures: TeamProcedures, observe: Observe | None = None,
                 judge: ContradictionJudge | None = None,
                 store_backup: Callable[[], BackupReport] | None = None,
                 corrections: CorrectionKeeper | None = None) -> None:
        """``judge``: the LLM's contradiction judgment for explicit writes (an LLM is configured), or
        ``None`` (reconcile's rules alone, as without an LLM). ``procedures``: the team procedures.
        ``store_backup``: the server's own backup of its embedded store (``bootstrap.ops.backup_now``),
        ``None`` where the stores have their own snapshots. ``corrections``: where a restore keeps its
        labelled pair, for the tenants that opted in (``None``: kept nowhere)."""
        self.deps = deps
        self.procedures = procedures
        self.procedure_vectors = team.ProcedureVectors()
        self.judge = judge
        self.audit = audit
        self.queue = queue
        self.door = Door(audit)
        self.admin = Admin(self.door, deps.catalog, pepper)
        self._pepper = pepper
        self._keys = apikeys.KeyCache()
        self.wait_max_seconds = 10.0  # seconds a `wait=true` status request may hold
        self._observe: Observe = observe or (lambda tenant, operation, scores: None)
        self.store_backup = store_backup
        self.corrections = corrections

    def authenticate(self, key: str | None) -> Principal:
        """Who holds ``key``: every entrypoint's first step (``Unauthenticated`` for a malformed,
        unknown or revoked key). The tenant comes from here and nowhere else."""
        return apikeys.authenticate(self.deps.catalog, self._pepper, key, self._keys)

    def verified(self, key: str | None) -> Principal | None:
        """Who holds ``key`` when it was verified since the last change to any key (``apikeys.KeyCache``):
        no lookup, nothing that waits, fit for the event loop. ``None``: call ``authenticate``."""
        return self._keys.cached(self.deps.catalog, self._pepper, key)

    def authenticate_session(self, key_hash: str) -> Principal:
        """Who holds the key of a console session (which keeps the key's keyed hash, never the key),
        checked again on every page: a revoked key ends its sessions at their next request."""
        return apikeys.authenticate_hash(self.deps.catalog, key_hash)

    def budgets(self, overrides: dict[str, int | float | None]) -> Budgets:
        """A request's assemble budgets: its overrides on the configured defaults."""
        return budgets(self.deps, overrides=overrides)

    @property
    def weights(self) -> Weights:
        """The ranking weights, for an entrypoint that explains a score."""
        return self.deps.weights

    def _scope(self, who: Principal, subject_id: str) -> Scope:
        return scope_for(self.deps, who.tenant, subject_id)

    def _subject(self, who: Principal, subject_id: str) -> Callable[[], Scope]:
        """The subject's scope, for the door to compute once the role has passed."""
        return lambda: self._scope(who, subject_id)

    def _hidden(self, who: Principal) -> tuple[str, ...]:
        return self.deps.special.hidden_for(who.tenant, who.roles)

    def _known(self, who: Principal, subject_id: str) -> None:
        """``SubjectNotFound`` unless the subject was ever written to (or still has records)."""
        scope = self._scope(who, subject_id)
        if not self.deps.catalog.is_registered(scope) and not self.deps.index.count(
                scope, where=RecordFilter(statuses=None)):
            raise SubjectNotFound()

    def _erasable(self, who: Principal, subject_id: str) -> None:
        """The rules of erasure, checked before its audit entry: the subject is known, not held. A data key
        that outlived an erasure (``complete: false``: the key store refused) is erased by asking again."""
        try:
            self._known(who, subject_id)
        except SubjectNotFound:
            scope = self._scope(who, subject_id)
            if not self.deps.keys.exists(scope.tenant, scope.subject):
                raise
        if self.deps.catalog.is_registered(self._scope(who, subject_id)) and retention.retention_status(
                self.deps, tenant=who.tenant, subject_id=subject_id).legal_hold:
            raise LegalHold()

    def _unreadable(self, who: Principal, operation: str, scope: Scope, found: Sequence[Unreadable]) -> None:
        """Records a read had to leave out: one queued entry per reason, their ids as targets, no text."""
        for reason in sorted({u.reason for u in found}):
            ids = tuple(u.id for u in found if u.reason == reason)
            self.audit.read(self.audit.event(tenant=who.tenant, actor=who.key_id, action="record.unreadable",
                                             subject=scope.subject, targets=ids, outcome="skipped",
                                             detail={"operation": operation, "reason": reason, "count": len(ids)}))

    # ---- agent: write and read a subject's memories -------------------------------------------

    def remember(self, who: Principal, *, subject_id: str, items: Sequence[NewMemory]) -> list[Outcome]:
        with self.door.write(who, "memory.write", (AGENT,), scope=self._subject(who, subject_id),
                             check=lambda: check_items(self.deps, who.tenant, items), detail={"count": len(items)}):
            deps = for_reader(self.deps, self._hidden(who))  # no record the caller may not read is a candidate
            if self.judge is not None:
                return remember_judged(deps, self.judge, tenant=who.tenant, subject_id=subject_id, items=items,
                                       actor=who.key_id)
            return remember(deps, tenant=who.tenant, subject_id=subject_id, items=items, actor=who.key_id)

    def submit_messages(self, who: Principal, *, subject_id: str, session_id: str | None,
                        messages: Sequence[Message], idempotency_key: str | None) -> Intake:
        """Queue raw messages for extraction (durable, sealed) and return at once."""
        with self.door.write(who, "intake.submit", (AGENT,), scope=self._subject(who, subject_id),
                             check=lambda: intake.check_messages(self.deps, messages),
                             detail={"messages": len(messages)}):
            found = intake.submit(self.deps, self.queue, tenant=who.tenant, subject_id=subject_id,
                                  session_id=session_id, messages=messages, idempotency_key=idempotency_key,
                                  actor=who.key_id)
        self.queue.bell.ring()
        return found

    def intake_status(self, who: Principal, *, intake_id: str) -> Intake:
        self.door.allow(who, "intake.status", (AGENT, DPO))
        found = intake.status(self.queue, tenant=who.tenant, intake_id=intake_id)
        return readable_intake(self.deps.index, found, self._hidden(who))  # no id of a record it may not read

    def intake_queue(self, who: Principal) -> intake.QueueState:
        """The tenant's intake counts and latest dead letters (role ``admin``)."""
        self.door.allow(who, "intake.queue", (ADMIN,))
        return intake.queue_state(self.queue, tenant=who.tenant)

    def retry_intakes(self, who: Principal, *, intake_id: str | None = None) -> int:
        """The tenant's dead intakes (or one) sent back to pending, as `carnet intakes retry --tenant` does."""
        with self.door.write(who, "intake.retry", (ADMIN,), targets=(intake_id,) if intake_id else ()):
            count = intake.retry_dead(self.deps, self.queue, tenant=who.tenant, intake_id=intake_id)
        self.queue.bell.ring()
        return count

    def search(self, who: Principal, *, subject_id: str, query: recall.Query) -> Found[recall.Ranked]:
        def run() -> Found[recall.Ranked]:
            q = recall.Query(query.text, query.k, query.kinds, query.include_superseded, query.min_relevance,
                             self._hidden(who))
            return recall.search(self.deps, tenant=who.tenant, subject_id=subject_id, query=q)

        ranked = self.door.read(who, "memory.search", (AGENT,), run, scope=self._subject(who, subject_id),
                                seen=lambda found: [r.memory.id for r in found])
        self._observe(who.tenant, "search", [r.score for r in ranked])
        self._unreadable(who, "search", self._scope(who, subject_id), ranked.unreadable)
        return ranked

    def assemble(self, who: Principal, *, subject_id: str, query: str, budget: Budgets,
                 agent_id: str | None = None, queue: str | None = None) -> Context:
        """``agent_id``/``queue``: the caller's, for the team procedures scoped to one (tenant-wide
        ones apply to every call)."""
        source = team.TeamSource(self.procedures, self.procedure_vectors, agent_id=agent_id, queue=queue)

        def run() -> Context:
            return assemble(self.deps, tenant=who.tenant, subject_id=subject_id, query=query, budget=budget,
                            hidden_special=self._hidden(who), team=source)

        def chosen(ctx: Context) -> list[recall.Ranked]:
            return [*ctx.memories, *ctx.episodes, *ctx.procedures]

        def detail(ctx: Context) -> dict[str, DetailValue]:  # which team procedures shaped the answer
            shown: dict[str, DetailValue] = {"count": len(chosen(ctx)) + len(ctx.profile)}
            if ctx.team:
                shown["team_procedures"] = ",".join(t.procedure.id for t in ctx.team)
            return shown

        ctx = self.door.read(who, "context.assemble", (AGENT,), run, scope=self._subject(who, subject_id),
                             seen=lambda found: [r.memory.id for r in chosen(found)] + [m.id for m in found.profile],
                             detail=detail)
        self._observe(who.tenant, "assemble", [r.score for r in chosen(ctx)])
        self._unreadable(who, "assemble", self._scope(who, subject_id), ctx.unreadable)
        return ctx

    def list_memories(self, who: Principal, *, subject_id: str, kind: Kind | None = None,
                      status: Status | None = Status.ACTIVE, category: str | None = None, limit: int = 50,
                      cursor: str | None = None) -> memories.Page:
        page = self.door.read(
            who, "memory.list", (AGENT, DPO), lambda: memories.list_memories(
                self.deps, tenant=who.tenant, subject_id=subject_id, kind=kind, status=status, category=category,
                limit=limit, cursor=cursor, hidden_special=self._hidden(who)),
            scope=self._subject(who, subject_id), seen=lambda page: [m.id for m in page.items])
        self._unreadable(who, "list", self._scope(who, subject_id), page.unreadable)
        return page

    def lookup(self, who: Principal, *, subject_id: str, identifier: str, limit: int = 50,
               include_superseded: bool = False) -> Found[Memory]:
        found = self.door.read(
            who, "memory.lookup", (AGENT,), lambda: memories.lookup(
                self.deps, tenant=who.tenant, subject_id=subject_id, identifier=identifier, limit=limit,
                include_superseded=include_superseded, hidden_special=self._hidden(who)),
            scope=self._subject(who, subject_id), seen=lambda found: [m.id for m in found])
        self._unreadable(who, "lookup", self._scope(who, subject_id), found.unreadable)
        return found

    def get_memory(self, who: Principal, *, subject_id: str, memory_id: str) -> Memory:
        def run() -> Memory:
            try:
                return memories.get_memory(self.deps, tenant=who.tenant, subject_id=subject_id,
                                           memory_id=memory_id, hidden_special=self._hidden(who))
            except MemoryUnreadable as exc:
                found = [Unreadable(memory_id, str(exc.context["reason"]))]
                self._unreadable(who, "get", self._scope(who, subject_id), found)
                raise

        return self.door.read(who, "memory.get", (AGENT, DPO), run, scope=self._subject(who, subject_id),
                              seen=lambda m: [m.id])

    def forget(self, who: Principal, *, subject_id: str, memory_id: str) -> None:
        """Delete one record (an agent relaying "forget that", or a DPO); it need not be readable."""
        def exists() -> None:
            memories.ensure_exists(self.deps, self._scope(who, subject_id), memory_id, self._hidden(who))

        with self.door.write(who, "memory.delete", (AGENT, DPO), scope=self._subject(who, subject_id),
                             check=exists, targets=(memory_id,)):
            rectify.forget(self.deps, tenant=who.tenant, subject_id=subject_id, memory_id=memory_id,
                           actor=who.key_id)

    def restore(self, who: Principal, *, subject_id: str, memory_id: str, reason: str | None = None) -> Restored:
        """A person (role ``supervisor`` or ``dpo``) undoes a supersession: the record is active again.
        The reason's words are never audited (only their length); see ``memories.restore``."""
        def valid() -> None:
            check_reason(reason)
            check_restorable(self.deps, self._scope(who, subject_id), memory_id, self._hidden(who))

        with self.door.write(who, "memory.restore", (SUPERVISOR, DPO), scope=self._subject(who, subject_id),
                             check=valid, targets=(memory_id,),
                             detail={"reason_chars": len(reason.strip()) if reason else 0}):
            return restore(self.deps, tenant=who.tenant, subject_id=subject_id, memory_id=memory_id, reason=reason,
                           actor=who.key_id, keeper=self.corrections, hidden_special=self._hidden(who))

    # ---- dpo: the data subject's rights ---------------------------------------------------------

    def history(self, who: Principal, *, subject_id: str, memory_id: str) -> list[HistoryEntry]:
        return self.door.read(
            who, "memory.history", (DPO,), lambda: memories.memory_history(
                self.deps, tenant=who.tenant, subject_id=subject_id, memory_id=memory_id),
            scope=self._subject(who, subject_id), seen=lambda _: [memory_id])

    def rectify(self, who: Principal, *, subject_id: str, memory_id: str,
                correction: rectify.Correction) -> Memory:
        def valid() -> None:
            rectify.check_correction(self.deps, who.tenant, correction)
            memories.get_memory(self.deps, tenant=who.tenant, subject_id=subject_id, memory_id=memory_id)

        with self.door.write(who, "memory.rectify", (DPO,), scope=self._subject(who, subject_id), check=valid,
                             targets=(memory_id,), detail={"fields": ",".join(correction.fields())}):
            return rectify.rectify(self.deps, tenant=who.tenant, subject_id=subject_id, memory_id=memory_id,
                                   correction=correction, actor=who.key_id)

    def export(self, who: Principal, *, subject_id: str) -> export_service.SubjectExport:
        return self.door.read(
            who, "subject.export", (DPO,), lambda: export_service.export_subject(
                self.deps, tenant=who.tenant, subject_id=subject_id,
                on_unreadable=lambda scope, skipped: self._unreadable(who, "export", scope, skipped)),
            scope=self._subject(who, subject_id), seen=lambda _: (), detail=lambda found: {"count": found.count},
            at_once=True)

    def retention(self, who: Principal, *, subject_id: str) -> SubjectRetention:
        self.door.allow(who, "subject.retention", (DPO,))
        return retention.retention_status(self.deps, tenant=who.tenant, subject_id=subject_id)

    def legal_hold(self, who: Principal, *, subject_id: str, hold: bool, reference: str | None = None
                   ) -> SubjectRetention:
        """A held subject loses nothing to retention, decay or erasure until the hold is lifted."""
        def valid() -> None:
            retention.check_reference(reference)
            retention.retention_status(self.deps, tenant=who.tenant, subject_id=subject_id)  # a known subject

        with self.door.write(who, "subject.hold" if hold else "subject.release", (DPO,),
                             scope=self._subject(who, subject_id), check=valid):
            if hold:
                return retention.set_legal_hold(self.deps, tenant=who.tenant, subject_id=subject_id,
                                                reference=reference)
            return retention.clear_legal_hold(self.deps, tenant=who.tenant, subject_id=subject_id)

    def relationship_end(self, who: Principal, *, subject_id: str, ended_at: datetime | None) -> SubjectRetention:
        """Starts (or, with None, stops) the clock of the classes counted from the end of the relationship."""
        with self.door.write(who, "subject.relationship_end", (DPO,), scope=self._subject(who, subject_id),
                             check=lambda: retention.retention_status(self.deps, tenant=who.tenant,
                                                                      subject_id=subject_id),
                             detail={"open": ended_at is None}):
            return retention.set_relationship_end(self.deps, tenant=who.tenant, subject_id=subject_id,
                                                  ended_at=ended_at)

    def retention_classes(self, who: Principal) -> list[RetentionClass]:
        """The retention classes in force for the caller's tenant (configuration, no personal data)."""
        self.door.allow(who, "retention.classes", (ADMIN, DPO))
        return sorted(self.deps.retention.classes(who.tenant).values(), key=lambda c: c.name)

    def maintain(self, who: Principal, *, dry_run: bool = False) -> MaintainReport:
        """Retention and decay for the caller's tenant only. Compaction is store-wide and pauses the
        store for a while: it is left to `carnet maintain` and the scheduler."""
        with self.door.write(who, "admin.maintain", (ADMIN,), detail={"dry_run": dry_run}):
            report = maintain(self.deps, tenant=who.tenant, dry_run=dry_run, compact=False, actor=who.key_id)
        record_audit(self.audit, report, actor=who.key_id)
        return report

    def maintain_store(self, who: Principal, *, dry_run: bool = False, compact: bool = True,
                       progress: Progress | None = None, stop: StopFlag | None = None) -> MaintainReport:
        """Every tenant, then compaction: ``carnet maintain`` and the scheduler, as a local operator of
        the store-wide chain (``operator("_system", ...)``). The same door and entries as ``maintain``:
        ``admin.maintain`` before the pass, one ``retention.maintain`` per tenant after it."""
        with self.door.write(who, "admin.maintain", (ADMIN,), detail={"dry_run": dry_run, "compact": compact}):
            report = maintain(self.deps, dry_run=dry_run, compact=compact, actor=who.key_id, progress=progress,
                              stop=stop)
        record_audit(self.audit, report, actor=who.key_id)
        return report

    def backup(self, who: Principal) -> BackupReport:
        """A backup of the whole embedded store now, written by this server into its own backup dir (the
        scheduler's job): nothing of it reaches the caller. Role admin; audited in the caller's tenant."""
        with self.door.write(who, "backup.create", (ADMIN,), check=self._backs_up):
            assert self.store_backup is not None  # checked by _backs_up before the entry
            return self.store_backup()

    def _backs_up(self) -> None:
        if self.store_backup is None:
            raise InvalidInput("this server does not back up its store itself (a Qdrant server and PostgreSQL "
                               "have their own snapshots: docs/backup.md)")

    def erase(self, who: Principal, *, subject_id: str) -> ErasureReceipt:
        """Erasure of an unknown subject is a 404 (like every route of another tenant's subjects), of a
        held one a 409 ``legal_hold``: refused before anything is written, the ledger included."""
        with self.door.write(who, "subject.erase", (DPO,), scope=self._subject(who, subject_id),
                             check=lambda: self._erasable(who, subject_id)) as scope:
            receipt = erase_subject(self.deps, tenant=who.tenant, subject_id=subject_id,
                                    still_erasable=lambda: self._erasable(who, subject_id), derived=self)
        self.audit.record(self.audit.event(
            tenant=who.tenant, actor=who.key_id, action="subject.erased", subject=scope.subject if scope else None,
            outcome="ok" if receipt.complete else "incomplete",
            detail={"records_deleted": receipt.records_deleted, "catalog_rows_deleted": receipt.catalog_rows_deleted,
                    "data_key_destroyed": receipt.data_key_destroyed,
                    "procedures_deleted": receipt.procedures_deleted}))
        return receipt
