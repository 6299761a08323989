"""Access and portability (GDPR art. 15 and 20): every record of a subject, of every kind and status,
decrypted, with its history and provenance. Yielded page by page, so a large subject streams."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from carnet.domain.records import HistoryEntry, Memory, Scope
from carnet.errors import SubjectNotFound
from carnet.ports import RecordFilter
from carnet.services.deps import Deps
from carnet.services.scope import scope_for

_PAGE = 200


@dataclass(frozen=True, slots=True)
class Exported:
    memory: Memory
    history: list[HistoryEntry]


@dataclass(frozen=True, slots=True)
class SubjectExport:
    scope: Scope
    count: int
    records: Iterator[Exported]


def export_subject(deps: Deps, *, tenant: str, subject_id: str) -> SubjectExport:
    """Checks the subject exists before anything streams (an unknown subject is a 404, not an empty
    200 that started), then reads lazily."""
    scope = scope_for(deps, tenant, subject_id)
    count = deps.index.count(scope, where=RecordFilter(statuses=None))
    if count == 0:
        raise SubjectNotFound()
    return SubjectExport(scope, count, _records(deps, scope))


def _records(deps: Deps, scope: Scope) -> Iterator[Exported]:
    every = RecordFilter(statuses=None)
    cursor: str | None = None
    while True:
        page, cursor = deps.index.scroll(scope, where=every, limit=_PAGE, offset=cursor)
        for m in page:
            yield Exported(m, deps.catalog.history(scope, m.id))
        if cursor is None or not page:
            return
