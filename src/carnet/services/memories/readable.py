"""The subject's records as one caller's role may read them, for the searches made on its behalf during a
write (issue 46, finding 3).

Reads already leave out the special categories a role may not read (``RecordFilter.hidden_special``).
A write searches too: reconcile's candidates (``neighbours.nearest``) and the contradiction judge's
neighbours. Had those searches seen a hidden record, an agent's short note could merge into it
(the answer carrying its text), supersede it (the answer carrying its id) or reinforce it (a change
the agent caused to a record it cannot see). ``for_reader`` gives the write a record store whose
searches (``hybrid_search``, ``scroll``, ``newest``, ``count``) leave out those categories, so no
decision of the write can use such a record: a hidden record is never a candidate of that caller's
write, and the answer holds only what the caller wrote (or records it may read). An intake's status
(``readable_intake``) leaves out the ids of hidden records the call's facts were merged into.

Reads by id (``get``, ``reveal``) are left as they are: the write uses them for its own ids (a replay)
and for records a search already chose. One limit follows and is documented in SECURITY.md: a record's
id derives from its text (or the caller's idempotency key), so an agent replaying the exact text of a
hidden record gets ``unchanged`` for that id, learning that the text it already holds was stored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from carnet.domain.intake import Intake
from carnet.domain.records import Memory, Scope
from carnet.domain.unreadable import Skipped
from carnet.ports import AccessUpdate, HybridHits, IndexedMemory, RecordFilter, RecordStore, SparseVector, Vector
from carnet.services.deps import Deps


def readable_intake(index: RecordStore, found: Intake, hidden: tuple[str, ...]) -> Intake:
    """``found`` with the ids of the records its caller may not read left out of ``memory_ids``: the
    worker reconciles a call against all of the member's records, so a fact of the call may have been
    merged into a hidden one. Their categories are read as stored (nothing is opened)."""
    if not hidden or not found.memory_ids:
        return found
    stored = index.get(Scope(found.tenant, found.subject), list(found.memory_ids), reveal=False)
    unseen = {m.id for m in stored if set(m.special).intersection(hidden)}
    return replace(found, memory_ids=tuple(i for i in found.memory_ids if i not in unseen)) if unseen else found


def for_reader(deps: Deps, hidden: tuple[str, ...]) -> Deps:
    """``deps`` whose record store's searches leave out the ``hidden`` categories (``deps`` itself
    when nothing is hidden: a ``dpo`` or ``admin`` key)."""
    if not hidden:
        return deps
    index: RecordStore = ReadableIndex(deps.index, hidden)  # checked against the port
    return replace(deps, index=index)


@dataclass(frozen=True, slots=True)
class ReadableIndex:
    """A ``RecordStore`` whose searches add ``hidden`` to the filter's ``hidden_special``."""

    inner: RecordStore
    hidden: tuple[str, ...]

    def _narrowed(self, where: RecordFilter) -> RecordFilter:
        return replace(where, hidden_special=tuple(sorted({*where.hidden_special, *self.hidden})))

    def hybrid_search(self, scope: Scope, *, dense: Vector, sparse: SparseVector | None, limit: int,
                      where: RecordFilter, with_vectors: bool = False, skipped: Skipped | None = None) -> HybridHits:
        return self.inner.hybrid_search(scope, dense=dense, sparse=sparse, limit=limit, where=self._narrowed(where),
                                        with_vectors=with_vectors, skipped=skipped)

    def scroll(self, scope: Scope, *, where: RecordFilter, limit: int, offset: str | None = None,
               reveal: bool = True, skipped: Skipped | None = None) -> tuple[list[Memory], str | None]:
        return self.inner.scroll(scope, where=self._narrowed(where), limit=limit, offset=offset, reveal=reveal,
                                 skipped=skipped)

    def newest(self, scope: Scope, *, where: RecordFilter, limit: int, reveal: bool = True,
               skipped: Skipped | None = None) -> list[Memory]:
        return self.inner.newest(scope, where=self._narrowed(where), limit=limit, reveal=reveal, skipped=skipped)

    def count(self, scope: Scope, *, where: RecordFilter) -> int:
        return self.inner.count(scope, where=self._narrowed(where))

    # ---- by id, and writes: as the store does them ---------------------------------------------

    def reveal(self, scope: Scope, memories: Sequence[Memory], *, pseudo_text: bool = False,
               skipped: Skipped | None = None) -> list[Memory]:
        return self.inner.reveal(scope, memories, pseudo_text=pseudo_text, skipped=skipped)

    def get(self, scope: Scope, ids: Sequence[str], *, reveal: bool = True,
            skipped: Skipped | None = None) -> list[Memory]:
        return self.inner.get(scope, ids, reveal=reveal, skipped=skipped)

    def upsert(self, scope: Scope, items: Sequence[IndexedMemory]) -> None:
        self.inner.upsert(scope, items)

    def replace_payload(self, scope: Scope, memories: Sequence[Memory]) -> None:
        self.inner.replace_payload(scope, memories)

    def delete(self, scope: Scope, ids: Sequence[str]) -> None:
        self.inner.delete(scope, ids)

    def record_access(self, scope: Scope, updates: Sequence[AccessUpdate]) -> None:
        self.inner.record_access(scope, updates)

    def rescope(self, old: Scope, new: Scope, items: Sequence[tuple[Memory, SparseVector]]) -> None:
        self.inner.rescope(old, new, items)

    def check(self) -> None:
        self.inner.check()

    def compact(self) -> bool:
        return self.inner.compact()

    def close(self) -> None:
        self.inner.close()
