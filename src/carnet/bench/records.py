"""Record stores the benchmarks put in place of the service's own, never built by ``carnet serve``.

``PlainRecords`` is the unsealed arm of the crypto A/B (``carnet bench crypto``): the bare vector store
behind the ``RecordStore`` port, nothing to open. ``TimedOpening`` wraps the sealed store and counts
the time spent opening fields, and how many, so the production class carries no benchmark counter.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from carnet.crypto.sealed_index import PREFIX
from carnet.domain.records import Memory, Scope
from carnet.domain.unreadable import Skipped
from carnet.ports import (
    AccessUpdate,
    HybridHits,
    IndexedMemory,
    RecordFilter,
    RecordStore,
    SparseVector,
    Vector,
    VectorIndex,
)


class _Forwarding:
    """Every ``VectorIndex`` method handed to ``_inner`` unchanged."""

    def __init__(self, inner: VectorIndex) -> None:
        self._inner = inner

    def upsert(self, scope: Scope, items: Sequence[IndexedMemory]) -> None:
        self._inner.upsert(scope, items)

    def replace_payload(self, scope: Scope, memories: Sequence[Memory]) -> None:
        self._inner.replace_payload(scope, memories)

    def hybrid_search(self, scope: Scope, *, dense: Vector, sparse: SparseVector | None, limit: int,
                      where: RecordFilter, with_vectors: bool = False, skipped: Skipped | None = None) -> HybridHits:
        return self._inner.hybrid_search(scope, dense=dense, sparse=sparse, limit=limit, where=where,
                                         with_vectors=with_vectors, skipped=skipped)

    def count(self, scope: Scope, *, where: RecordFilter) -> int:
        return self._inner.count(scope, where=where)

    def newest(self, scope: Scope, *, where: RecordFilter, limit: int,
               skipped: Skipped | None = None) -> list[Memory]:
        return self._inner.newest(scope, where=where, limit=limit, skipped=skipped)

    def delete(self, scope: Scope, ids: Sequence[str]) -> None:
        self._inner.delete(scope, ids)

    def record_access(self, scope: Scope, updates: Sequence[AccessUpdate]) -> None:
        self._inner.record_access(scope, updates)

    def rescope(self, old: Scope, new: Scope, items: Sequence[tuple[Memory, SparseVector]]) -> None:
        self._inner.rescope(old, new, items)

    def check(self) -> None:
        self._inner.check()

    def compact(self) -> bool:
        return self._inner.compact()

    def close(self) -> None:
        self._inner.close()


class PlainRecords(_Forwarding):
    """A ``RecordStore`` that seals nothing: records are written and read back in clear. A benchmark
    arm only (what sealing costs), never a setting."""

    def reveal(self, scope: Scope, memories: Sequence[Memory], *, pseudo_text: bool = False,
               skipped: Skipped | None = None) -> list[Memory]:
        return list(memories)

    def get(self, scope: Scope, ids: Sequence[str], *, reveal: bool = True,
            skipped: Skipped | None = None) -> list[Memory]:
        return self._inner.get(scope, ids, skipped=skipped)

    def scroll(self, scope: Scope, *, where: RecordFilter, limit: int, offset: str | None = None,
               reveal: bool = True, skipped: Skipped | None = None) -> tuple[list[Memory], str | None]:
        return self._inner.scroll(scope, where=where, limit=limit, offset=offset, skipped=skipped)

    def newest(self, scope: Scope, *, where: RecordFilter, limit: int, reveal: bool = True,
               skipped: Skipped | None = None) -> list[Memory]:
        return self._inner.newest(scope, where=where, limit=limit, skipped=skipped)


class TimedOpening(_Forwarding):
    """A sealed ``RecordStore`` whose opening of fields is timed: ``open_seconds`` (key lookup
    included) and ``opened`` (fields: ``text``, and ``pseudo_text`` when asked).

    Opening is timed around ``reveal``; a ``get`` or ``scroll`` that opens is read sealed and then
    revealed here, so its opening is timed too and the store's own read is not."""

    def __init__(self, inner: RecordStore) -> None:
        super().__init__(inner)
        self._sealed = inner
        self.open_seconds = 0.0
        self.opened = 0

    def reveal(self, scope: Scope, memories: Sequence[Memory], *, pseudo_text: bool = False,
               skipped: Skipped | None = None) -> list[Memory]:
        started = time.perf_counter()
        out = self._sealed.reveal(scope, memories, pseudo_text=pseudo_text, skipped=skipped)
        self.open_seconds += time.perf_counter() - started
        sealed = {m.id for m in memories if m.text.startswith(PREFIX)}  # a readable record is passed through
        self.opened += (2 if pseudo_text else 1) * sum(m.id in sealed for m in out)
        return out

    def get(self, scope: Scope, ids: Sequence[str], *, reveal: bool = True,
            skipped: Skipped | None = None) -> list[Memory]:
        found = self._sealed.get(scope, ids, reveal=False, skipped=skipped)
        return self.reveal(scope, found, pseudo_text=True, skipped=skipped) if reveal else found

    def scroll(self, scope: Scope, *, where: RecordFilter, limit: int, offset: str | None = None,
               reveal: bool = True, skipped: Skipped | None = None) -> tuple[list[Memory], str | None]:
        found, nxt = self._sealed.scroll(scope, where=where, limit=limit, offset=offset, reveal=False,
                                         skipped=skipped)
        return (self.reveal(scope, found, pseudo_text=True, skipped=skipped) if reveal else found), nxt

    def newest(self, scope: Scope, *, where: RecordFilter, limit: int, reveal: bool = True,
               skipped: Skipped | None = None) -> list[Memory]:
        found = self._sealed.newest(scope, where=where, limit=limit, reveal=False, skipped=skipped)
        return self.reveal(scope, found, pseudo_text=True, skipped=skipped) if reveal else found
