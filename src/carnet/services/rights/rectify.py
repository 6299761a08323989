"""Rectification (GDPR art. 16) and forgetting one record.

A corrected text goes through the whole write path again: pseudonymised with the subject's map,
re-embedded, its keyword vector and blind-index tokens recomputed, and sealed anew; the point is
overwritten in place, so the old text survives nowhere in the store. History records which fields
changed, never their values. Forgetting deletes the point physically and keeps a metadata-only
history entry.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from carnet.domain.embedding_text import embedding_text
from carnet.domain.linking import linking_references
from carnet.domain.pii.special import special_categories
from carnet.domain.profile import is_profile
from carnet.domain.reconcile.topics import keyword_text
from carnet.domain.reconcile.values import DATETIME_MESSAGE, TEXT_MESSAGE, in_range, is_clean
from carnet.domain.records import HistoryEntry, Kind, Memory, Scope
from carnet.domain.unreadable import Skipped
from carnet.errors import InvalidInput, MemoryNotFound, MemoryUnreadable
from carnet.ports import IndexedMemory
from carnet.services import pii
from carnet.services.memories import reads as memories
from carnet.services.needs import RectifyNeeds
from carnet.services.scope import scope_for


@dataclass(frozen=True, slots=True)
class Correction:
    """The fields to change; ``None`` leaves a field as it is."""

    text: str | None = None
    category: str | None = None
    importance: float | None = None
    tags: tuple[str, ...] | None = None
    occurred_at: datetime | None = None
    retention: str | None = None

    def fields(self) -> tuple[str, ...]:
        return tuple(name for name in ("text", "category", "importance", "tags", "occurred_at", "retention")
                     if getattr(self, name) is not None)


def rectify(deps: RectifyNeeds, *, tenant: str, subject_id: str, memory_id: str, correction: Correction,
            actor: str) -> Memory:
    changed = correction.fields()
    if not changed:
        raise InvalidInput("nothing to change: give at least one field")
    _validate(deps, tenant, correction)
    scope = scope_for(deps, tenant, subject_id)
    with deps.locks.for_scope(scope):
        old = _stored(deps, scope, memory_id)
        now = deps.clock.now()
        new = _corrected(deps, old, correction, now, subject_id)
        if correction.text is not None or (correction.occurred_at is not None and deps.embed_dates):
            deps.index.upsert(scope, [_indexed(deps, scope, new)])
        else:
            deps.index.replace_payload(scope, [new])
        deps.catalog.append_history(scope, [HistoryEntry(memory_id, now, "rectified", actor,
                                                         {"fields": ",".join(changed)})])
    return new


def forget(deps: RectifyNeeds, *, tenant: str, subject_id: str, memory_id: str, actor: str,
           reason: str = "request") -> None:
    """Delete one record physically; history keeps that it was deleted, by whom and why."""
    scope = scope_for(deps, tenant, subject_id)
    with deps.locks.for_scope(scope):
        memories.ensure_exists(deps, scope, memory_id)  # without decrypting: a damaged record goes too
        deps.index.delete(scope, [memory_id])
        deps.catalog.append_history(scope, [HistoryEntry(memory_id, deps.clock.now(), "deleted", actor,
                                                         {"reason": reason})])
    deps.embedder.clear(scope.tenant)  # a cached query embedding may hold words of the deleted text


def _stored(deps: RectifyNeeds, scope: Scope, memory_id: str) -> Memory:
    skipped: Skipped = []
    found = deps.index.get(scope, [memory_id], skipped=skipped)
    if not found and skipped:
        raise MemoryUnreadable(memory_id, deps.unreadable.add("rectify", skipped)[0].reason)
    if not found:
        raise MemoryNotFound(memory_id)
    return found[0]


def check_correction(deps: RectifyNeeds, tenant: str, c: Correction) -> None:
    """What ``rectify`` refuses in the correction itself, checked without writing anything (the door
    runs it before the audit entry)."""
    if not c.fields():
        raise InvalidInput("nothing to change: give at least one field")
    _validate(deps, tenant, c)


def _validate(deps: RectifyNeeds, tenant: str, c: Correction) -> None:
    if c.text is not None and not c.text.strip():
        raise InvalidInput("text is empty")
    if c.text is not None and len(c.text) > deps.limits.max_text_chars:
        raise InvalidInput(f"text is longer than {deps.limits.max_text_chars} characters")
    if c.importance is not None and not 0.0 <= c.importance <= 1.0:
        raise InvalidInput("importance must be between 0 and 1")
    if c.occurred_at is not None and not in_range(c.occurred_at):
        raise InvalidInput(f"occurred_at {DATETIME_MESSAGE}")
    if c.text is not None and not is_clean(c.text):
        raise InvalidInput(f"text {TEXT_MESSAGE}")
    if c.retention is not None and deps.retention.lookup(tenant, c.retention) is None:
        raise InvalidInput("unknown retention class")


def _corrected(deps: RectifyNeeds, old: Memory, c: Correction, now: datetime, subject_id: str) -> Memory:
    new = replace(
        old,
        category=old.category if c.category is None else c.category,
        importance=old.importance if c.importance is None else c.importance,
        tags=old.tags if c.tags is None else c.tags,
        valid_from=old.valid_from if c.occurred_at is None else c.occurred_at,
        retention=old.retention if c.retention is None else c.retention,
        updated_at=now,
    )
    if c.text is not None:
        prepared = pii.for_write(deps.pii, old.scope, [c.text])[0]
        # A person wrote what is true: no newer note contests it any more (``domain.contested``).
        new = replace(new, text=c.text, pseudo_text=prepared.pseudo_text, special=special_categories(c.text),
                      contested_by=(),
                      profile=old.kind is Kind.FACT and is_profile(c.text),
                      blind_index=deps.hasher.blind_tokens(old.scope.tenant,
                                                           [*linking_references(c.text, subject_id),
                                                            *prepared.identifiers]))
    if c.text is not None or c.occurred_at is not None or c.retention is not None:
        tenant = old.scope.tenant  # a class dropped from the settings since: the tenant's default
        retention = deps.retention.lookup(tenant, new.retention) or deps.retention.classes(tenant)["default"]
        new = replace(new, expires_at=deps.special.expires_at(old.scope.tenant, new.special, new.valid_from,
                                                              retention.expires_at(new.valid_from)))
    return new


def _indexed(deps: RectifyNeeds, scope: Scope, m: Memory) -> IndexedMemory:
    text = embedding_text(m.pseudo_text, at=m.valid_from if deps.embed_dates else None, locale=deps.locale)
    vector = deps.embedder.embed_passages([text])[0]
    return IndexedMemory(m, vector, deps.sparse.encode_document(scope, keyword_text(m.pseudo_text)))
