"""Erasure of a data subject (GDPR art. 17): records, history, then the data key, then proof.

Order matters: the erasure is written to the ledger first (keyed hashes only), so a restore of an
older backup, or a crash half-way, still gets it applied; then records and catalog rows go, and the
subject's data key last. Once the key is destroyed, every copy of the subject's sealed records that
survives elsewhere (a snapshot, a backup of the data directory) can no longer be opened. The
receipt says what was deleted and what was verified afterwards; it names the subject only by its
keyed hash.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from carnet.domain.records import Scope
from carnet.ports import ErasureEntry, RecordFilter, VectorIndex
from carnet.services.deps import Deps
from carnet.services.scope import scope_for

_PAGE = 500


@dataclass(frozen=True, slots=True)
class ErasureReceipt:
    tenant: str
    subject_hash: str
    at: datetime
    records_deleted: int
    catalog_rows_deleted: int
    data_key_destroyed: bool
    verified: dict[str, bool] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return all(self.verified.values())

    def as_dict(self) -> dict[str, object]:
        return {
            "tenant": self.tenant, "subject_hash": self.subject_hash, "at": self.at.isoformat(),
            "records_deleted": self.records_deleted, "catalog_rows_deleted": self.catalog_rows_deleted,
            "data_key_destroyed": self.data_key_destroyed, "verified": self.verified, "complete": self.complete,
        }


def erase_subject(deps: Deps, *, tenant: str, subject_id: str) -> ErasureReceipt:
    scope = scope_for(deps, tenant, subject_id)
    with deps.locks.for_scope(scope):
        deps.ledger.append(ErasureEntry(tenant, scope.subject, deps.hasher.hash_key(tenant), deps.clock.now()))
        records = delete_records(deps.index, scope)
        rows = deps.catalog.erase_subject(scope)
        rows += deps.intakes.forget_subject(scope.tenant, scope.subject)
        deps.subjects.forget(scope)
        deps.pii.maps.forget(scope)
        destroyed = deps.keys.shred(scope.tenant, scope.subject)
        deps.embedder.clear(scope.tenant)  # cached query embeddings may come from this subject's calls
        verified = _verify(deps, scope)
    return ErasureReceipt(tenant, scope.subject, deps.clock.now(), records, rows, destroyed, verified)


def delete_records(index: VectorIndex, scope: Scope) -> int:
    """Every point of the scope, whatever its kind or status (superseded ones too)."""
    every = RecordFilter(statuses=None)
    deleted = 0
    while True:
        page, _ = index.scroll(scope, where=every, limit=_PAGE)
        if not page:
            return deleted
        index.delete(scope, [m.id for m in page])
        deleted += len(page)


def _verify(deps: Deps, scope: Scope) -> dict[str, bool]:
    every = RecordFilter(statuses=None)
    probe = np.full(deps.embedder.dim, 1.0 / np.sqrt(deps.embedder.dim), dtype=np.float32)
    hits = deps.index.hybrid_search(scope, dense=probe, sparse=None, limit=10, where=every)
    return {
        "count_is_zero": deps.index.count(scope, where=every) == 0,
        "search_returns_nothing": not hits.dense and not hits.sparse,
        "data_key_gone": not deps.keys.exists(scope.tenant, scope.subject),
    }
