"""Access and portability (GDPR art. 15 and 20): every record of a subject, of every kind and status,
decrypted, with its history and provenance. Yielded page by page, so a large subject streams.

A record that cannot be read back (its payload or ciphertext damaged, its data key damaged or gone)
is yielded as an ``Unreadable``: its id and a reason code (:mod:`carnet.domain.unreadable`), with its
history (metadata only). The subject learns that the record exists; the export never stops at it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from carnet.domain.records import HistoryEntry, Memory, Scope
from carnet.domain.unreadable import Skipped, Unreadable
from carnet.errors import SubjectNotFound
from carnet.ports import RecordFilter
from carnet.services.needs import ExportNeeds
from carnet.services.scope import scope_for

__all__ = ["Exported", "NotExported", "SubjectExport", "Unreadable", "export_subject"]

_PAGE = 200


@dataclass(frozen=True, slots=True)
class Exported:
    memory: Memory
    history: list[HistoryEntry]


@dataclass(frozen=True, slots=True)
class NotExported:
    """A record that could not be read: its id, why, and its history."""

    record: Unreadable
    history: list[HistoryEntry]

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def reason(self) -> str:
        return self.record.reason


@dataclass(frozen=True, slots=True)
class SubjectExport:
    scope: Scope
    count: int
    records: Iterator[Exported | NotExported]


OnUnreadable = Callable[[Scope, tuple[Unreadable, ...]], None]


def export_subject(deps: ExportNeeds, *, tenant: str, subject_id: str, on_unreadable: OnUnreadable | None = None
                   ) -> SubjectExport:
    """Checks the subject exists before anything streams (an unknown subject is a 404, not an empty
    200 that started), then reads lazily. ``on_unreadable`` hears of each page's unreadable records
    (the facade audits them)."""
    scope = scope_for(deps, tenant, subject_id)
    count = deps.index.count(scope, where=RecordFilter(statuses=None))
    if count == 0:
        raise SubjectNotFound()
    return SubjectExport(scope, count, _records(deps, scope, on_unreadable or (lambda scope, found: None)))


def _records(deps: ExportNeeds, scope: Scope, on_unreadable: OnUnreadable) -> Iterator[Exported | NotExported]:
    every = RecordFilter(statuses=None)
    cursor: str | None = None
    while True:
        skipped: Skipped = []
        page, cursor = deps.index.scroll(scope, where=every, limit=_PAGE, offset=cursor, skipped=skipped)
        for m in page:
            yield Exported(m, deps.catalog.history(scope, m.id))
        unreadable = deps.unreadable.add("export", skipped)
        if unreadable:
            on_unreadable(scope, unreadable)
        for u in unreadable:
            yield NotExported(u, deps.catalog.history(scope, u.id))
        if cursor is None or (not page and not skipped):
            return
