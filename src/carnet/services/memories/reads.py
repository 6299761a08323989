"""Reading records directly: list with filters and paging, look up by identifier, get one, its history.

A record that cannot be read back (:mod:`carnet.domain.unreadable`) is left out of a page or a lookup,
counted, and named in the answer's ``unreadable``; asked for by id, it is a ``MemoryUnreadable`` (410).
Whether a record exists is checked without decrypting it (``ensure_exists``), so a damaged record can
still be forgotten and its history read."""

from __future__ import annotations

from dataclasses import dataclass

from carnet.domain.records import HistoryEntry, Kind, Memory, Scope, Status
from carnet.domain.unreadable import Found, Skipped, Unreadable
from carnet.errors import InvalidInput, MemoryNotFound, MemoryUnreadable, SubjectNotFound
from carnet.ports import RecordFilter
from carnet.services import pii
from carnet.services.needs import ReadsNeeds
from carnet.services.scope import scope_for


@dataclass(frozen=True, slots=True)
class Page:
    items: list[Memory]
    next_cursor: str | None
    unreadable: tuple[Unreadable, ...] = ()  # records of this page that could not be read, left out


def list_memories(deps: ReadsNeeds, *, tenant: str, subject_id: str, kind: Kind | None = None,
                  status: Status | None = Status.ACTIVE, category: str | None = None,
                  limit: int = 50, cursor: str | None = None, hidden_special: tuple[str, ...] = ()) -> Page:
    if not 1 <= limit <= 500:
        raise InvalidInput("limit must be between 1 and 500")
    scope = scope_for(deps, tenant, subject_id)
    where = RecordFilter(kinds=(kind,) if kind else None, statuses=(status,) if status else None,
                         category=category, hidden_special=hidden_special)
    skipped: Skipped = []
    items, nxt = deps.index.scroll(scope, where=where, limit=limit, offset=cursor, skipped=skipped)
    if not items and not skipped and cursor is None and deps.index.count(scope, where=RecordFilter(statuses=None)) == 0:
        raise SubjectNotFound()
    return Page(items, nxt, deps.unreadable.add("list", skipped))


def lookup(deps: ReadsNeeds, *, tenant: str, subject_id: str, identifier: str, limit: int = 50,
           include_superseded: bool = False, hidden_special: tuple[str, ...] = ()) -> Found[Memory]:
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
    skipped: Skipped = []
    items, _ = deps.index.scroll(scope, where=where, limit=limit, skipped=skipped)
    if not items and not skipped and deps.index.count(scope, where=RecordFilter(statuses=None)) == 0:
        raise SubjectNotFound()  # as every route does for a subject the tenant does not hold
    return Found(items, deps.unreadable.add("lookup", skipped))


def get_memory(deps: ReadsNeeds, *, tenant: str, subject_id: str, memory_id: str,
               hidden_special: tuple[str, ...] = ()) -> Memory:
    """A record the caller may not read (a special category its key's policy hides) is not found."""
    scope = scope_for(deps, tenant, subject_id)
    skipped: Skipped = []
    found = deps.index.get(scope, [memory_id], skipped=skipped)
    if not found and skipped:
        ensure_exists(deps, scope, memory_id, hidden_special)  # a hidden record stays "not found"
        raise MemoryUnreadable(memory_id, deps.unreadable.add("get", skipped)[0].reason)
    if not found or set(found[0].special).intersection(hidden_special):
        raise MemoryNotFound(memory_id)
    return found[0]


def ensure_exists(deps: ReadsNeeds, scope: Scope, memory_id: str, hidden_special: tuple[str, ...] = ()) -> None:
    """``MemoryNotFound`` unless the record is stored (readable or not) and the caller may see it,
    checked without decrypting anything. A record whose payload does not decode at all cannot tell
    its special categories: it counts as existing (forgetting it reveals nothing)."""
    skipped: Skipped = []
    found = deps.index.get(scope, [memory_id], reveal=False, skipped=skipped)
    if found and not set(found[0].special).intersection(hidden_special):
        return
    if not found and skipped:
        return
    raise MemoryNotFound(memory_id)


def memory_history(deps: ReadsNeeds, *, tenant: str, subject_id: str, memory_id: str,
                   hidden_special: tuple[str, ...] = ()) -> list[HistoryEntry]:
    """History is metadata: a record that cannot be decrypted still has one."""
    scope = scope_for(deps, tenant, subject_id)
    ensure_exists(deps, scope, memory_id, hidden_special)
    return deps.catalog.history(scope, memory_id)
