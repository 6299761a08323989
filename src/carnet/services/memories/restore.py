"""Restore a superseded record: a person says reconcile was wrong, the older note is still true.

Undone both ways, under the subject's lock (as ``remember``, which closed it):

- the older record is active again (``status``, ``valid_to`` and ``superseded_by`` cleared);
- the newer record keeps no trace of having closed it: records hold no back-reference (only the
  older one names the newer), so what the newer gets is a ``restored`` history entry naming the
  older; and where a record of the older one's parts still true was written when it was closed in
  part (id keyed on ``rest:<older id>``, as ``remember`` has written them), it is deleted, since the
  restored record says them again;
- the summary of the call the older note was read from, when ``remember`` closed it with the note
  (the same newer record closed both), is reopened too;
- each gets a ``restored`` history entry (who, and how long the reason was: never its words).

The person's reason is member-derived free text: it is never in history or audit. When the tenant
keeps corrections (``CorrectionKeeper``), the pair (both pseudonymised texts, their dates, the rule
that closed it, the reason pseudonymised) is sealed under the subject's key and stored as a label
``not_superseded`` for ``carnet judge train --corrections``; otherwise the reason is dropped.

A record another was merged into cannot be "un-merged": a merge keeps no copy of the note it absorbed
(only its provenance and a count), so there is nothing to restore; such a record is active, and a
restore of it is refused (``NotSuperseded``) like any record that is not superseded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime

from carnet.domain.corrections import CorrectionPair
from carnet.domain.reconcile.values import TEXT_MESSAGE, is_clean
from carnet.domain.records import HistoryEntry, Kind, Memory, Scope, Status, point_id
from carnet.domain.unreadable import Skipped
from carnet.errors import InvalidInput, MemoryNotFound, MemoryUnreadable, NotSuperseded
from carnet.services import pii
from carnet.services.memories.corrections import CorrectionKeeper
from carnet.services.memories.remember import keyed_id
from carnet.services.needs import RestoreNeeds
from carnet.services.scope import scope_for

MAX_REASON_CHARS = 1000
RESTORED = "restored"


@dataclass(frozen=True, slots=True)
class Restored:
    memory: Memory  # the record, active again
    newer: str | None  # the record that had superseded it
    rest_deleted: str | None = None  # the remainder written when it was closed in part, now deleted
    label_kept: bool = False


def check_reason(reason: str | None) -> None:
    """What ``restore`` refuses in the reason, checked before the door's audit entry."""
    if reason is None:
        return
    if len(reason) > MAX_REASON_CHARS:
        raise InvalidInput(f"reason is longer than {MAX_REASON_CHARS} characters")
    if not is_clean(reason):
        raise InvalidInput(f"reason {TEXT_MESSAGE}")


def check_restorable(deps: RestoreNeeds, scope: Scope, memory_id: str, hidden_special: tuple[str, ...] = ()) -> None:
    """``MemoryNotFound``/``MemoryUnreadable``/``NotSuperseded`` before the audit entry (checked again
    under the lock by ``restore``)."""
    _superseded(deps, scope, memory_id, hidden_special)


def restore(deps: RestoreNeeds, *, tenant: str, subject_id: str, memory_id: str, reason: str | None, actor: str,
            keeper: CorrectionKeeper | None = None, hidden_special: tuple[str, ...] = ()) -> Restored:
    check_reason(reason)
    scope = scope_for(deps, tenant, subject_id)
    with deps.locks.for_scope(scope):
        old = _superseded(deps, scope, memory_id, hidden_special)
        now = deps.clock.now()
        newer = _newer(deps, scope, old)
        keep = _label(deps, keeper, scope, old, newer, reason, now)  # sealed before anything is written
        restored = _reopened(old, now)
        summaries = _summaries(deps, scope, old)
        deps.index.replace_payload(scope, [restored, *(_reopened(m, now) for m in summaries)])
        rest = _drop_rest(deps, scope, old)
        if keep is not None:
            keep()
        deps.catalog.append_history(scope, [
            *_entries(old, newer, rest, reason, now, actor, kept=keep is not None),
            *(HistoryEntry(m.id, now, RESTORED, actor, {"with": old.id}) for m in summaries)])
    if rest is not None:
        deps.embedder.clear(scope.tenant)  # a cached query embedding may hold words of the deleted text
    return Restored(restored, old.superseded_by, rest, label_kept=keep is not None)


def _superseded(deps: RestoreNeeds, scope: Scope, memory_id: str, hidden_special: tuple[str, ...]) -> Memory:
    skipped: Skipped = []
    found = deps.index.get(scope, [memory_id], skipped=skipped)
    if not found and skipped:
        raise MemoryUnreadable(memory_id, deps.unreadable.add("restore", skipped)[0].reason)
    if not found or set(found[0].special).intersection(hidden_special):
        raise MemoryNotFound(memory_id)
    if found[0].status is not Status.SUPERSEDED:
        raise NotSuperseded(memory_id, found[0].status.value)
    return found[0]


def _newer(deps: RestoreNeeds, scope: Scope, old: Memory) -> Memory | None:
    """The record that closed ``old``, if it is still there and opens (else no pair is kept)."""
    if old.superseded_by is None:
        return None
    skipped: Skipped = []
    found = deps.index.get(scope, [old.superseded_by], skipped=skipped)
    deps.unreadable.add("restore", skipped)
    return found[0] if found else None


def _summaries(deps: RestoreNeeds, scope: Scope, old: Memory) -> list[Memory]:
    """The summaries of the calls ``old`` was read from that ``remember`` closed with it (closed by the
    same record: ``_close_summaries``), found by their ids (``intake:<id>:episode``): reopened too."""
    ids = [keyed_id(deps.hasher, scope, f"intake:{s.ref}:episode") for s in old.sources if s.kind == "intake"]
    found = deps.index.get(scope, ids) if ids and old.kind is Kind.FACT else []
    return [m for m in found if m.kind is Kind.EPISODE and m.status is Status.SUPERSEDED
            and m.superseded_by == old.superseded_by]


def _reopened(m: Memory, now: datetime) -> Memory:
    # A person said it is true: nothing contests it any more (``domain.contested``).
    return replace(m, status=Status.ACTIVE, superseded_by=None, valid_to=None, updated_at=now, contested_by=())


def _drop_rest(deps: RestoreNeeds, scope: Scope, old: Memory) -> str | None:
    """The record of ``old``'s parts still true, if one was written when it was closed in part (its id
    keyed on ``rest:<old id>``), deleted: the restored record says them again."""
    rid = keyed_id(deps.hasher, scope, f"rest:{old.id}")
    if not deps.index.get(scope, [rid], reveal=False):
        return None
    deps.index.delete(scope, [rid])
    return rid


def _label(deps: RestoreNeeds, keeper: CorrectionKeeper | None, scope: Scope, old: Memory, newer: Memory | None,
           reason: str | None, now: datetime) -> Callable[[], None] | None:
    """Where the tenant keeps corrections and the newer record is still there: the pair, sealed, and
    the function that stores it."""
    if keeper is None or newer is None or not keeper.keeps(scope.tenant):
        return None
    return keeper.prepared(scope, _pair(deps, scope, old, newer, reason, now))


def _pair(deps: RestoreNeeds, scope: Scope, old: Memory, newer: Memory, reason: str | None,
          now: datetime) -> CorrectionPair:
    said = reason.strip() if reason else ""
    return CorrectionPair(
        id=point_id(scope, f"correction:{old.id}:{newer.id}"), older=old.pseudo_text, newer=newer.pseudo_text,
        older_valid_from=old.valid_from, newer_valid_from=newer.valid_from, closed_at=old.valid_to,
        corrected_at=now, rule=_rule(deps, scope, old, newer.id),
        reason=pii.for_write(deps.pii, scope, [said])[0].pseudo_text if said else "")


def _rule(deps: RestoreNeeds, scope: Scope, old: Memory, by: str) -> str:
    """What reconcile said when it closed ``old`` (its last ``superseded`` history entry by ``by``)."""
    closing = [e for e in deps.catalog.history(scope, old.id) if e.action == "superseded" and e.detail.get("by") == by]
    return closing[-1].detail.get("rule", "") if closing else ""


def _entries(old: Memory, newer: Memory | None, rest: str | None, reason: str | None, now: datetime, actor: str,
             *, kept: bool) -> list[HistoryEntry]:
    detail = {"superseded_by": old.superseded_by or "", "reason_chars": str(len(reason.strip()) if reason else 0),
              "label_kept": str(kept).lower()}
    entries = [HistoryEntry(old.id, now, RESTORED, actor, detail)]
    if newer is not None:
        entries.append(HistoryEntry(newer.id, now, RESTORED, actor, {"no_longer_supersedes": old.id}))
    if rest is not None:
        entries.append(HistoryEntry(rest, now, "deleted", actor, {"reason": "restored", "restored": old.id}))
    return entries
