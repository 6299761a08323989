"""Maintenance: retention, decay and compaction in one pass over every registered subject.

Forgetting is scheduled, not manual (DESIGN.md): ``carnet maintain``, the in-process scheduler of
``carnet serve`` and the admin endpoint all call ``maintain``. For each tenant in the catalog, each
registered subject, under the subject's lock (so it never races a write that reconciles against
the same records): the subject's legal hold and relationship end are read from the catalog, every
record's metadata is read (texts stay sealed: no data key is unwrapped), ``domain.retention.doomed``
says what must go and why, and those points are deleted physically, each with a metadata-only
history entry (``deleted`` by ``maintain``, the reason and the class name; never text). Then the
store is compacted so deleted payloads leave its segment files (``VectorIndex.compact``).

The report counts deletions per tenant and reason; it names no subject and holds no text. A subject
the pass fails on, whatever the exception (a store error, a damaged record, a bug), is counted as
failed, logged by error code or type, and the pass goes on with the next subject and the next tenant;
a tenant whose subjects cannot even be listed counts one failure. A dry run changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

import structlog

from carnet.domain.audit import DetailValue
from carnet.domain.records import HistoryEntry, Memory, RetentionClass, Scope
from carnet.domain.retention import doomed
from carnet.domain.unreadable import Unreadable
from carnet.ports import RecordFilter
from carnet.services.audit import AuditTrail
from carnet.services.needs import MaintainNeeds
from carnet.services.resilient import error_label

log = structlog.get_logger(__name__)

_PAGE = 500
Progress = Callable[[str, int, int], None]  # tenant, subjects done, subjects of the tenant
StopFlag = Callable[[], bool]


@dataclass(slots=True)
class TenantReport:
    subjects: int = 0
    held: int = 0  # under legal hold: nothing of theirs was looked at for deletion
    failed: int = 0
    unreadable: int = 0  # records whose metadata no longer decodes: left as they are, counted
    deleted: dict[str, int] = field(default_factory=dict)  # reason -> records

    def as_dict(self) -> dict[str, object]:
        return {"subjects": self.subjects, "held": self.held, "failed": self.failed,
                "unreadable": self.unreadable, "deleted": dict(sorted(self.deleted.items()))}


@dataclass(slots=True)
class MaintainReport:
    started_at: datetime
    dry_run: bool
    tenants: dict[str, TenantReport] = field(default_factory=dict)
    finished_at: datetime | None = None
    compacted: bool = False
    interrupted: bool = False

    def totals(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for t in self.tenants.values():
            for reason, n in t.deleted.items():
                out[reason] = out.get(reason, 0) + n
        return dict(sorted(out.items()))

    def as_dict(self) -> dict[str, object]:
        return {
            "started_at": self.started_at.isoformat(),
            "finished_at": None if self.finished_at is None else self.finished_at.isoformat(),
            "dry_run": self.dry_run, "interrupted": self.interrupted, "compacted": self.compacted,
            "deleted": self.totals(), "tenants": {name: t.as_dict() for name, t in sorted(self.tenants.items())},
        }


def maintain(deps: MaintainNeeds, *, tenant: str | None = None, dry_run: bool = False, compact: bool = True,
             actor: str = "maintain", progress: Progress | None = None,
             stop: StopFlag | None = None) -> MaintainReport:
    """One pass over every tenant's subjects, or ``tenant``'s only (an admin key acts on its own
    tenant). ``stop`` is polled between subjects (the scheduler stops at shutdown without waiting for
    the whole pass); an interrupted pass skips compaction, which is store-wide."""
    report = MaintainReport(started_at=deps.clock.now(), dry_run=dry_run)
    tenants = deps.catalog.registered_tenants()
    for name in tenants if tenant is None else [t for t in tenants if t == tenant]:
        report.tenants[name] = tenant_report = TenantReport()
        if not _tenant_pass(deps, name, tenant_report, dry_run=dry_run, actor=actor, progress=progress,
                            stop=stop):
            report.interrupted = True
            break
    if not dry_run:
        for name, tenant_report in report.tenants.items():
            if tenant_report.deleted:
                deps.embedder.clear(name)  # cached query embeddings may hold words of what was deleted
    if compact and not dry_run and not report.interrupted:
        report.compacted = deps.index.compact()
    report.finished_at = deps.clock.now()
    log.info("maintain_done", dry_run=dry_run, interrupted=report.interrupted, compacted=report.compacted,
             **{f"deleted_{reason}": n for reason, n in report.totals().items()})
    return report


def record_audit(audit: AuditTrail, report: MaintainReport, *, actor: str) -> None:
    """One audit entry per tenant the pass went through: what was deleted, by reason (counts only).
    Recorded after the pass: what a pass deletes is only known once it has looked."""
    for tenant, t in sorted(report.tenants.items()):
        detail: dict[str, DetailValue] = {"dry_run": report.dry_run, "subjects": t.subjects, "held": t.held,
                                          "failed": t.failed, "unreadable": t.unreadable, **t.deleted}
        audit.record(audit.event(tenant=tenant, actor=actor, action="retention.maintain",
                                 outcome="interrupted" if report.interrupted else "ok", detail=detail))


def _tenant_pass(deps: MaintainNeeds, tenant: str, report: TenantReport, *, dry_run: bool, actor: str,
                 progress: Progress | None, stop: StopFlag | None) -> bool:
    """``False`` when stopped before the end."""
    try:
        subjects = deps.catalog.registered_subjects(tenant)
        classes = deps.retention.classes(tenant)
    except Exception as exc:  # this tenant is counted as failed; the next tenants are still processed
        report.failed += 1
        log.error("maintain_tenant_failed", tenant=tenant, error=error_label(exc))
        return True
    report.subjects = len(subjects)
    for n, registered in enumerate(subjects, 1):
        if stop is not None and stop():
            return False
        try:
            _subject_pass(deps, registered.scope, classes, report, dry_run=dry_run, actor=actor)
        except Exception as exc:  # one subject's failure, whatever it is, does not stop the others: counted
            report.failed += 1
            log.warning("maintain_subject_failed", tenant=tenant, error=error_label(exc))
        if progress is not None:
            progress(tenant, n, len(subjects))
    return True


def _subject_pass(deps: MaintainNeeds, scope: Scope, classes: Mapping[str, RetentionClass], report: TenantReport, *,
                  dry_run: bool, actor: str) -> None:
    with deps.locks.for_scope(scope):
        state = deps.catalog.subject_retention(scope)
        if state.legal_hold:
            report.held += 1
            return
        skipped: list[Unreadable] = []
        records = _metadata(deps, scope, skipped)
        report.unreadable += len(deps.unreadable.add("maintain", skipped))
        now = deps.clock.now()
        gone = doomed(records, now=now, classes=classes, subject=state, decay=deps.decay)
        if not gone:
            return
        if not dry_run:
            retention = {m.id: m.retention for m in records}
            deps.index.delete(scope, list(gone))
            deps.catalog.append_history(scope, [
                HistoryEntry(mid, now, "deleted", actor, {"reason": reason.value, "retention": retention[mid]})
                for mid, reason in gone.items()])
    for reason in gone.values():
        report.deleted[reason.value] = report.deleted.get(reason.value, 0) + 1


def _metadata(deps: MaintainNeeds, scope: Scope, skipped: list[Unreadable]) -> list[Memory]:
    """Every record of the subject, any status, texts left sealed; those whose metadata does not decode
    are noted in ``skipped`` (never deleted by retention: their dates cannot be read)."""
    every = RecordFilter(statuses=None)
    out: list[Memory] = []
    offset: str | None = None
    while True:
        page, offset = deps.index.scroll(scope, where=every, limit=_PAGE, offset=offset, reveal=False,
                                         skipped=skipped)
        out.extend(page)
        if offset is None:
            return out
