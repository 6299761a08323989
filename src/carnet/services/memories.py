"""Reading records directly: list with filters and paging, look up by identifier, get one, its history."""

from __future__ import annotations

from dataclasses import dataclass

from carnet.domain.records import HistoryEntry, Kind, Memory, Status
from carnet.errors import InvalidInput, MemoryNotFound, SubjectNotFound
from carnet.ports import RecordFilter
from carnet.services import pii
from carnet.services.deps import Deps
from carnet.services.scope import scope_for


@dataclass(frozen=True, slots=True)
class Page:
    items: list[Memory]
    next_cursor: str | None


def list_memories(deps: Deps, *, tenant: str, subject_id: str, kind: Kind | None = None,
                  status: Status | None = Status.ACTIVE, category: str | None = None,
                  limit: int = 50, cursor: str | None = None, hidden_special: tuple[str, ...] = ()) -> Page:
    if not 1 <= limit <= 500:
        raise InvalidInput("limit must be between 1 and 500")
    scope = scope_for(deps, tenant, subject_id)
    where = RecordFilter(kinds=(kind,) if kind else None, statuses=(status,) if status else None,
                         category=category, hidden_special=hidden_special)
    items, nxt = deps.index.scroll(scope, where=where, limit=limit, offset=cursor)
    if not items and cursor is None and deps.index.count(scope, where=RecordFilter(statuses=None)) == 0:
        raise SubjectNotFound()
    return Page(items, nxt)


def lookup(deps: Deps, *, tenant: str, subject_id: str, identifier: str, limit: int = 50,
           include_superseded: bool = False, hidden_special: tuple[str, ...] = ()) -> list[Memory]:
    """The subject's records naming ``identifier`` (a claim or contract reference), found through the
    blind index: one keyed hash is computed and matched, nothing is decrypted to search."""
    if not identifier.strip() or len(identifier) > 128:
        raise InvalidInput("identifier must be 1 to 128 characters")
    if not 1 <= limit <= 500:
        raise InvalidInput("limit must be between 1 and 500")
    scope = scope_for(deps, tenant, subject_id)
    tokens = deps.hasher.blind_tokens(tenant, [pii.identifier_of(deps.pii, tenant, identifier)])
    if not tokens:
        raise InvalidInput("identifier has no letter or digit")
    where = RecordFilter(statuses=None if include_superseded else (Status.ACTIVE,), blind_token=tokens[0],
                         hidden_special=hidden_special)
    items, _ = deps.index.scroll(scope, where=where, limit=limit)
    if not items and deps.index.count(scope, where=RecordFilter(statuses=None)) == 0:
        raise SubjectNotFound()  # as every route does for a subject the tenant does not hold
    return items


def get_memory(deps: Deps, *, tenant: str, subject_id: str, memory_id: str,
               hidden_special: tuple[str, ...] = ()) -> Memory:
    """A record the caller may not read (a special category its key's policy hides) is not found."""
    scope = scope_for(deps, tenant, subject_id)
    found = deps.index.get(scope, [memory_id])
    if not found or set(found[0].special).intersection(hidden_special):
        raise MemoryNotFound(memory_id)
    return found[0]


def memory_history(deps: Deps, *, tenant: str, subject_id: str, memory_id: str,
                   hidden_special: tuple[str, ...] = ()) -> list[HistoryEntry]:
    get_memory(deps, tenant=tenant, subject_id=subject_id, memory_id=memory_id, hidden_special=hidden_special)
    return deps.catalog.history(scope_for(deps, tenant, subject_id), memory_id)
