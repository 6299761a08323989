"""The in-process facade: every use case as a caller (a ``Principal``) may run it.

REST, MCP and the Python in-process API all go through here, so the three things every call needs
happen in one place and cannot be forgotten by an entrypoint: the role check, the special-category
policy of the caller's key, and the audit entry (writes recorded before they happen, reads queued).
The tenant always comes from the principal, never from the request.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from carnet.domain.intake import Intake, Message
from carnet.domain.records import HistoryEntry, Kind, Memory, Scope, Status
from carnet.domain.retention import SubjectRetention
from carnet.domain.unreadable import Found, Unreadable
from carnet.errors import LegalHold, MemoryUnreadable, SubjectNotFound
from carnet.ports import RecordFilter
from carnet.services import export as export_service
from carnet.services import intake, memories, recall, rectify, retention
from carnet.services.apikeys import Principal
from carnet.services.assemble import Budgets, Context, assemble
from carnet.services.audit import AuditTrail
from carnet.services.deps import Deps
from carnet.services.erase import ErasureReceipt, erase_subject
from carnet.services.intake import IntakeQueue
from carnet.services.maintain import MaintainReport, maintain, record_audit
from carnet.services.remember import NewMemory, Outcome, remember
from carnet.services.scope import scope_for

AGENT, DPO, ADMIN = "agent", "dpo", "admin"


Observe = Callable[[str, str, list[float]], None]  # (tenant, operation, scores returned)


class Facade:
    def __init__(self, deps: Deps, audit: AuditTrail, queue: IntakeQueue, *, observe: Observe | None = None) -> None:
        self.deps = deps
        self.audit = audit
        self.queue = queue
        self.on_intake: Callable[[], None] = lambda: None  # wakes in-process workers
        self.wait_max_seconds = 10.0  # seconds a `wait=true` status request may hold
        self._observe: Observe = observe or (lambda tenant, operation, scores: None)

    def _scope(self, who: Principal, subject_id: str) -> Scope:
        return scope_for(self.deps, who.tenant, subject_id)

    def _hidden(self, who: Principal) -> tuple[str, ...]:
        return self.deps.special.hidden_for(who.tenant, who.roles)

    def _read(self, who: Principal, action: str, scope: Scope, ids: Sequence[str]) -> None:
        self.audit.read(self.audit.event(tenant=who.tenant, actor=who.key_id, action=action, subject=scope.subject,
                                         targets=tuple(ids), detail={"count": len(ids)}))

    def _unreadable(self, who: Principal, operation: str, scope: Scope, found: Sequence[Unreadable]) -> None:
        """Records a read had to leave out: one queued entry per reason, their ids as targets, no text."""
        for reason in sorted({u.reason for u in found}):
            ids = tuple(u.id for u in found if u.reason == reason)
            self.audit.read(self.audit.event(tenant=who.tenant, actor=who.key_id, action="record.unreadable",
                                             subject=scope.subject, targets=ids, outcome="skipped",
                                             detail={"operation": operation, "reason": reason, "count": len(ids)}))

    # ---- agent: write and read a subject's memories -------------------------------------------

    def remember(self, who: Principal, *, subject_id: str, items: Sequence[NewMemory]) -> list[Outcome]:
        who.require(AGENT)
        scope = self._scope(who, subject_id)
        event = self.audit.event(tenant=who.tenant, actor=who.key_id, action="memory.write", subject=scope.subject,
                                 detail={"count": len(items)})
        with self.audit.recorded(event):
            return remember(self.deps, tenant=who.tenant, subject_id=subject_id, items=items, actor=who.key_id)

    def submit_messages(self, who: Principal, *, subject_id: str, session_id: str | None,
                        messages: Sequence[Message], idempotency_key: str | None) -> Intake:
        """Queue raw messages for extraction (durable, sealed) and return at once."""
        who.require(AGENT)
        scope = self._scope(who, subject_id)
        event = self.audit.event(tenant=who.tenant, actor=who.key_id, action="intake.submit", subject=scope.subject,
                                 detail={"messages": len(messages)})
        with self.audit.recorded(event):
            found = intake.submit(self.deps, self.queue, tenant=who.tenant, subject_id=subject_id,
                                  session_id=session_id, messages=messages, idempotency_key=idempotency_key,
                                  actor=who.key_id)
        self.on_intake()
        return found

    def intake_status(self, who: Principal, *, intake_id: str) -> Intake:
        who.require(AGENT, DPO)
        return intake.status(self.queue, tenant=who.tenant, intake_id=intake_id)

    def search(self, who: Principal, *, subject_id: str, query: recall.Query) -> Found[recall.Ranked]:
        who.require(AGENT)
        q = recall.Query(query.text, query.k, query.kinds, query.include_superseded, query.min_relevance,
                         self._hidden(who))
        ranked = recall.search(self.deps, tenant=who.tenant, subject_id=subject_id, query=q)
        self._observe(who.tenant, "search", [r.score for r in ranked])
        self._read(who, "memory.search", self._scope(who, subject_id), [r.memory.id for r in ranked])
        self._unreadable(who, "search", self._scope(who, subject_id), ranked.unreadable)
        return ranked

    def assemble(self, who: Principal, *, subject_id: str, query: str, budget: Budgets) -> Context:
        who.require(AGENT)
        ctx = assemble(self.deps, tenant=who.tenant, subject_id=subject_id, query=query, budget=budget,
                       hidden_special=self._hidden(who))
        chosen = (*ctx.memories, *ctx.episodes, *ctx.procedures)
        self._observe(who.tenant, "assemble", [r.score for r in chosen])
        ids = [r.memory.id for r in chosen]
        self._read(who, "context.assemble", self._scope(who, subject_id), ids)
        self._unreadable(who, "assemble", self._scope(who, subject_id), ctx.unreadable)
        return ctx

    def list_memories(self, who: Principal, *, subject_id: str, kind: Kind | None = None,
                      status: Status | None = Status.ACTIVE, category: str | None = None, limit: int = 50,
                      cursor: str | None = None) -> memories.Page:
        who.require(AGENT, DPO)
        page = memories.list_memories(self.deps, tenant=who.tenant, subject_id=subject_id, kind=kind, status=status,
                                      category=category, limit=limit, cursor=cursor, hidden_special=self._hidden(who))
        self._read(who, "memory.list", self._scope(who, subject_id), [m.id for m in page.items])
        self._unreadable(who, "list", self._scope(who, subject_id), page.unreadable)
        return page

    def lookup(self, who: Principal, *, subject_id: str, identifier: str, limit: int = 50,
               include_superseded: bool = False) -> Found[Memory]:
        who.require(AGENT)
        found = memories.lookup(self.deps, tenant=who.tenant, subject_id=subject_id, identifier=identifier,
                                limit=limit, include_superseded=include_superseded, hidden_special=self._hidden(who))
        self._read(who, "memory.lookup", self._scope(who, subject_id), [m.id for m in found])
        self._unreadable(who, "lookup", self._scope(who, subject_id), found.unreadable)
        return found

    def get_memory(self, who: Principal, *, subject_id: str, memory_id: str) -> Memory:
        who.require(AGENT, DPO)
        try:
            m = memories.get_memory(self.deps, tenant=who.tenant, subject_id=subject_id, memory_id=memory_id,
                                    hidden_special=self._hidden(who))
        except MemoryUnreadable as exc:
            found = [Unreadable(memory_id, str(exc.context["reason"]))]
            self._unreadable(who, "get", self._scope(who, subject_id), found)
            raise
        self._read(who, "memory.get", m.scope, [m.id])
        return m

    def forget(self, who: Principal, *, subject_id: str, memory_id: str) -> None:
        """Delete one record (an agent relaying "forget that", or a DPO)."""
        who.require(AGENT, DPO)
        scope = self._scope(who, subject_id)
        memories.ensure_exists(self.deps, scope, memory_id, self._hidden(who))  # without decrypting it
        event = self.audit.event(tenant=who.tenant, actor=who.key_id, action="memory.delete", subject=scope.subject,
                                 targets=(memory_id,))
        with self.audit.recorded(event):
            rectify.forget(self.deps, tenant=who.tenant, subject_id=subject_id, memory_id=memory_id,
                           actor=who.key_id)

    # ---- dpo: the data subject's rights ---------------------------------------------------------

    def history(self, who: Principal, *, subject_id: str, memory_id: str) -> list[HistoryEntry]:
        who.require(DPO)
        entries = memories.memory_history(self.deps, tenant=who.tenant, subject_id=subject_id, memory_id=memory_id)
        self._read(who, "memory.history", self._scope(who, subject_id), [memory_id])
        return entries

    def rectify(self, who: Principal, *, subject_id: str, memory_id: str,
                correction: rectify.Correction) -> Memory:
        who.require(DPO)
        scope = self._scope(who, subject_id)
        event = self.audit.event(tenant=who.tenant, actor=who.key_id, action="memory.rectify",
                                 subject=scope.subject, targets=(memory_id,),
                                 detail={"fields": ",".join(correction.fields())})
        with self.audit.recorded(event):
            return rectify.rectify(self.deps, tenant=who.tenant, subject_id=subject_id, memory_id=memory_id,
                                   correction=correction, actor=who.key_id)

    def export(self, who: Principal, *, subject_id: str) -> export_service.SubjectExport:
        who.require(DPO)
        found = export_service.export_subject(
            self.deps, tenant=who.tenant, subject_id=subject_id,
            on_unreadable=lambda scope, skipped: self._unreadable(who, "export", scope, skipped))
        self.audit.record(self.audit.event(tenant=who.tenant, actor=who.key_id, action="subject.export",
                                           subject=found.scope.subject, detail={"count": found.count}))
        return found

    def retention(self, who: Principal, *, subject_id: str) -> SubjectRetention:
        who.require(DPO)
        return retention.retention_status(self.deps, tenant=who.tenant, subject_id=subject_id)

    def legal_hold(self, who: Principal, *, subject_id: str, hold: bool, reference: str | None = None
                   ) -> SubjectRetention:
        """A held subject loses nothing to retention, decay or erasure until the hold is lifted."""
        who.require(DPO)
        scope = self._scope(who, subject_id)
        event = self.audit.event(tenant=who.tenant, actor=who.key_id, subject=scope.subject,
                                 action="subject.hold" if hold else "subject.release")
        with self.audit.recorded(event):
            if hold:
                return retention.set_legal_hold(self.deps, tenant=who.tenant, subject_id=subject_id,
                                                reference=reference)
            return retention.clear_legal_hold(self.deps, tenant=who.tenant, subject_id=subject_id)

    def relationship_end(self, who: Principal, *, subject_id: str, ended_at: datetime | None) -> SubjectRetention:
        """Starts (or, with None, stops) the clock of the classes counted from the end of the relationship."""
        who.require(DPO)
        scope = self._scope(who, subject_id)
        event = self.audit.event(tenant=who.tenant, actor=who.key_id, subject=scope.subject,
                                 action="subject.relationship_end", detail={"open": ended_at is None})
        with self.audit.recorded(event):
            return retention.set_relationship_end(self.deps, tenant=who.tenant, subject_id=subject_id,
                                                  ended_at=ended_at)

    def maintain(self, who: Principal, *, dry_run: bool = False) -> MaintainReport:
        """Retention and decay for the caller's tenant only. Compaction is store-wide and pauses the
        store for a while: it is left to `carnet maintain` and the scheduler."""
        who.require(ADMIN)
        event = self.audit.event(tenant=who.tenant, actor=who.key_id, action="admin.maintain",
                                 detail={"dry_run": dry_run})
        with self.audit.recorded(event):
            report = maintain(self.deps, tenant=who.tenant, dry_run=dry_run, compact=False, actor=who.key_id)
        record_audit(self.audit, report, actor=who.key_id)
        return report

    def erase(self, who: Principal, *, subject_id: str) -> ErasureReceipt:
        """Erasure of an unknown subject is a 404 (like every route of another tenant's subjects)."""
        who.require(DPO)
        scope = self._scope(who, subject_id)
        if not self.deps.catalog.is_registered(scope) and not self.deps.index.count(
                scope, where=RecordFilter(statuses=None)):
            raise SubjectNotFound()
        if self.deps.catalog.is_registered(scope) and retention.retention_status(
                self.deps, tenant=who.tenant, subject_id=subject_id).legal_hold:
            raise LegalHold()
        event = self.audit.event(tenant=who.tenant, actor=who.key_id, action="subject.erase", subject=scope.subject)
        with self.audit.recorded(event):
            receipt = erase_subject(self.deps, tenant=who.tenant, subject_id=subject_id)
        self.audit.record(self.audit.event(
            tenant=who.tenant, actor=who.key_id, action="subject.erased", subject=scope.subject,
            outcome="ok" if receipt.complete else "incomplete",
            detail={"records_deleted": receipt.records_deleted, "catalog_rows_deleted": receipt.catalog_rows_deleted,
                    "data_key_destroyed": receipt.data_key_destroyed}))
        return receipt
