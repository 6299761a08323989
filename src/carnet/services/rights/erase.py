"""Erasure of a data subject (GDPR art. 17): the data key, then records and history, then proof.

Order matters, and nothing in it needs to read a record:

1. the erasure is written to the ledger (keyed hashes only), so a restore of an older backup, or a
   crash half-way, still gets it applied;
2. the subject's data key is destroyed: from then on every copy of the subject's sealed records (the
   store itself, a snapshot, a backup of the data directory) can no longer be opened. Destroying it
   needs no unwrap, so a damaged key is destroyed as well as a sound one;
3. the points are deleted by id within the subject's scope (tenant and subject hash), found by a
   metadata-only scroll: nothing is decrypted, and a record whose payload no longer decodes is still
   named by its id and deleted;
4. catalog rows (history, aliases, the corrections people made, kept as labels), intakes, the subject
   registry and the pseudonym map go;
5. what was derived from the member outside its records goes too (``Derived``: the team procedures
   read from its calls, whatever their status, issue 46), and is checked gone.

The receipt says what was deleted, what was verified afterwards and what could not be removed
(``residue``: record ids still found, or ``data_key`` when the key store refused); it names the
subject only by its keyed hash. ``complete`` is true when the key is gone and nothing is findable.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

import numpy as np
import structlog

from carnet.domain.records import Memory, Scope
from carnet.domain.unreadable import Skipped
from carnet.errors import CarnetError
from carnet.ports import ErasureEntry, RecordFilter, RecordStore, VectorIndex
from carnet.services.needs import EraseNeeds
from carnet.services.scope import scope_for

log = structlog.get_logger(__name__)

_PAGE = 500
DATA_KEY = "data_key"  # the residue entry when the key store refused to destroy the key


@dataclass(frozen=True, slots=True)
class ErasureReceipt:
    tenant: str
    subject_hash: str
    at: datetime
    records_deleted: int
    catalog_rows_deleted: int
    data_key_destroyed: bool
    verified: dict[str, bool] = field(default_factory=dict)
    residue: tuple[str, ...] = ()  # what is still there: record ids, or ``data_key``
    unreadable_deleted: int = 0  # records deleted although they could not be decoded
    procedures_deleted: int = 0  # team procedures read from the member's calls (``Derived``)

    @property
    def complete(self) -> bool:
        return all(self.verified.values())

    def as_dict(self) -> dict[str, object]:
        return {
            "tenant": self.tenant, "subject_hash": self.subject_hash, "at": self.at.isoformat(),
            "records_deleted": self.records_deleted, "catalog_rows_deleted": self.catalog_rows_deleted,
            "data_key_destroyed": self.data_key_destroyed, "verified": self.verified, "complete": self.complete,
            "residue": list(self.residue), "unreadable_deleted": self.unreadable_deleted,
            "procedures_deleted": self.procedures_deleted,
        }


class Derived(Protocol):
    """What was derived from a member outside its records (the team procedures read from its calls),
    keyed by the member's keyed hash (``origin``): deleted with the member, then checked gone."""

    def forget_derived(self, tenant: str, origin: str) -> int: ...

    def derived_left(self, tenant: str, origin: str) -> bool: ...


@dataclass(frozen=True, slots=True)
class Deleted:
    records: int
    unreadable: int  # of which the payload did not decode (deleted by id all the same)
    residue: tuple[str, ...]  # ids still found after deletion


def erase_subject(deps: EraseNeeds, *, tenant: str, subject_id: str,
                  still_erasable: Callable[[], object] | None = None, derived: Derived | None = None) -> ErasureReceipt:
    """``still_erasable`` re-checks the caller's rules (legal hold) under the subject's lock, which a
    legal hold also takes: a hold placed between the caller's first check and here is never missed.
    ``derived``: what else was made from the member's words, deleted under the same lock (an intake
    worker proposes a procedure under it too, and only while its intake is still there)."""
    scope = scope_for(deps, tenant, subject_id)
    with deps.locks.for_scope(scope):
        if still_erasable is not None:
            still_erasable()
        deps.ledger.append(ErasureEntry(tenant, scope.subject, deps.hasher.hash_key(tenant), deps.clock.now()))
        destroyed, key_residue = _destroy_key(deps, scope)
        deleted = delete_records(deps.index, scope)
        rows = deps.catalog.erase_subject(scope)
        rows += deps.intakes.forget_subject(scope.tenant, scope.subject)
        deps.subjects.forget(scope)
        deps.pii.maps.forget(scope)
        deps.embedder.clear(scope.tenant)  # cached query embeddings may come from this subject's calls
        procedures = derived.forget_derived(tenant, scope.subject) if derived is not None else 0
        verified = _verify(deps, scope)
        if derived is not None:
            verified["derived_procedures_gone"] = not derived.derived_left(tenant, scope.subject)
    return ErasureReceipt(tenant, scope.subject, deps.clock.now(), deleted.records, rows, destroyed, verified,
                          residue=key_residue + deleted.residue, unreadable_deleted=deleted.unreadable,
                          procedures_deleted=procedures)


def _destroy_key(deps: EraseNeeds, scope: Scope) -> tuple[bool, tuple[str, ...]]:
    """Shred first. If the key store refuses, the records are deleted all the same and the receipt
    lists the key as residue (the ledger line gets the erasure applied again later)."""
    try:
        return deps.keys.shred(scope.tenant, scope.subject), ()
    except CarnetError as exc:
        log.error("erasure_key_not_destroyed", error=exc.code)
        return False, (DATA_KEY,)


def delete_records(index: RecordStore, scope: Scope) -> Deleted:
    """Every point of the scope, whatever its kind or status (superseded ones too), by id, without
    opening anything. Ids deleted once and found again are residue (the loop then stops)."""
    every = RecordFilter(statuses=None)
    return _delete_pages(index, scope, lambda skipped: index.scroll(
        scope, where=every, limit=_PAGE, reveal=False, skipped=skipped)[0])


def delete_stored_records(index: VectorIndex, scope: Scope) -> Deleted:
    """``delete_records`` on the bare store, whose records come as stored (re-erasure: the subject's
    key is gone, nothing would open anyway)."""
    every = RecordFilter(statuses=None)
    return _delete_pages(index, scope, lambda skipped: index.scroll(
        scope, where=every, limit=_PAGE, skipped=skipped)[0])


def _delete_pages(index: VectorIndex, scope: Scope, page: Callable[[Skipped], list[Memory]]) -> Deleted:
    deleted: set[str] = set()
    unreadable = 0
    while True:
        skipped: Skipped = []
        ids = [m.id for m in page(skipped)] + [u.id for u in skipped]
        again = [i for i in ids if i in deleted]
        if not ids or again:
            return Deleted(len(deleted), unreadable, tuple(sorted(again)))
        index.delete(scope, ids)
        deleted.update(ids)
        unreadable += len(skipped)


def _verify(deps: EraseNeeds, scope: Scope) -> dict[str, bool]:
    every = RecordFilter(statuses=None)
    probe = np.full(deps.embedder.dim, 1.0 / np.sqrt(deps.embedder.dim), dtype=np.float32)
    skipped: Skipped = []  # a hit that does not decode is still a hit
    hits = deps.index.hybrid_search(scope, dense=probe, sparse=None, limit=10, where=every, skipped=skipped)
    return {
        "count_is_zero": deps.index.count(scope, where=every) == 0,
        "search_returns_nothing": not hits.dense and not hits.sparse and not skipped,
        "data_key_gone": not _key_exists(deps, scope),
        "corrections_gone": deps.catalog.subject_corrections(scope) == 0,  # people's restores kept as labels
    }


def _key_exists(deps: EraseNeeds, scope: Scope) -> bool:
    try:
        return deps.keys.exists(scope.tenant, scope.subject)
    except CarnetError:  # an entry that cannot be read back is still there
        return True
