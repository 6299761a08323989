"""Re-hashing a tenant under a new hash key (``carnet keys rehash``).

Every subject hash, sparse-token hash and blind-index token of a tenant is an HMAC under the
tenant's hash key. Rotating that key means recomputing all of them, which is possible because the
subject registry keeps each subject id sealed under the subject's data key. For each subject:

1. its id is opened, and its new hash computed under the new key;
2. its data key is stored under the new hash too (the same key: no record needs a new key);
3. its records are read (opened), then written back under the new hash: sealed again (the hash is in
   the associated data), new sparse vector and blind-index tokens, same dense vector;
4. its history, aliases, pseudonym map (resealed) and registry row move to the new hash in one
   catalog transaction, and the team procedures read from its calls name the new hash (their
   ``origin``: the member's erasure must still find them);
5. the key-store entry under the old hash is deleted.

Then the catalog switches the tenant to the new hash key and the old one is destroyed. Every step
can be re-run: a crash leaves each record either moved or not (one point at a time), and running the
command again finishes the work. It must run while nothing else writes to the tenant (the embedded
store enforces this with its lock; with a Qdrant server, stop the API and workers first). Backups
taken before a rehash name subjects by their old hashes: take a new backup afterwards.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from carnet.crypto.keyring import Keyring
from carnet.crypto.pseudonym_store import SealedPseudonymMaps
from carnet.crypto.tenant_hasher import TENANT_ENTRY, is_hash_key_entry, next_hash_key_entry
from carnet.domain.linking import linking_references
from carnet.domain.pii.pseudonyms import PseudonymMap
from carnet.domain.reconcile.topics import keyword_text
from carnet.domain.records import Scope
from carnet.errors import Conflict
from carnet.ports import (
    Catalog,
    RecordFilter,
    RecordStore,
    SparseEncoder,
    SubjectHasher,
    SubjectIdSealer,
    TeamProcedures,
)
from carnet.services.pii import Pii, identifiers_in

_PAGE = 200


@dataclass(frozen=True, slots=True)
class RehashReport:
    tenant: str
    old_hash_key: str
    new_hash_key: str
    subjects_moved: int
    records_moved: int
    leftover_entries_deleted: int
    old_hash_key_destroyed: bool

    def as_dict(self) -> dict[str, object]:
        return {"tenant": self.tenant, "old_hash_key": self.old_hash_key, "new_hash_key": self.new_hash_key,
                "subjects_moved": self.subjects_moved, "records_moved": self.records_moved,
                "leftover_entries_deleted": self.leftover_entries_deleted,
                "old_hash_key_destroyed": self.old_hash_key_destroyed}


@dataclass(frozen=True, slots=True)
class Rehasher:
    """What a rehash needs; ``hasher_on(entry)`` and ``sparse_on(hasher)`` build the new key's
    hasher and sparse encoder (the bootstrap supplies them)."""

    index: RecordStore  # read opened (blind-index tokens are of the text), written sealed under the new hash
    catalog: Catalog
    keyring: Keyring
    sealer: SubjectIdSealer
    hasher_on: Callable[[str], SubjectHasher]
    sparse_on: Callable[[SubjectHasher], SparseEncoder]
    maps: SealedPseudonymMaps
    pii: Pii
    procedures: TeamProcedures | None = None  # their ``origin`` names a member by its hash


def rehash_tenant(r: Rehasher, *, tenant: str, progress: Callable[[int, int], None] | None = None) -> RehashReport:
    current = r.catalog.hash_key_entry(tenant) or TENANT_ENTRY
    target = next_hash_key_entry(current)
    hasher = r.hasher_on(target)
    sparse = r.sparse_on(hasher)
    registered = r.catalog.registered_subjects(tenant)
    ids = {s.scope: r.sealer.open_id(s.scope, s.sealed_id) for s in registered if s.hash_key != target}
    moves = [(s, ids[s.scope], Scope(tenant, hasher.subject_hash(tenant, ids[s.scope])))
             for s in registered if s.scope in ids]
    _refuse_unregistered(r, tenant, {s.scope.subject for s in registered} | {new.subject for *_, new in moves})
    _destroy_hash_keys(r, tenant, keep={current, target})  # an older one left by an interrupted run
    records = 0
    for n, (subject, subject_id, new) in enumerate(moves, start=1):
        r.keyring.copy_entry(tenant, subject.scope.subject, new.subject)
        records += _move_records(r, subject.scope, new, hasher, sparse, subject_id)
        r.catalog.move_subject(subject.scope, new, hash_key=target, sealed_id=r.sealer.seal_id(new, subject_id),
                               sealed_map=_resealed_map(r, subject.scope, new))
        if r.procedures is not None:
            r.procedures.move_origin(tenant, subject.scope.subject, new.subject)
        r.keyring.shred(tenant, subject.scope.subject)
        if progress is not None:
            progress(n, len(moves))
    r.catalog.set_hash_key_entry(tenant, target)
    leftovers = _delete_leftover_copies(r, tenant)
    destroyed = _destroy_hash_keys(r, tenant, keep={target}) > 0
    return RehashReport(tenant, current, target, len(moves), records, leftovers, destroyed)


def _destroy_hash_keys(r: Rehasher, tenant: str, *, keep: set[str]) -> int:
    return sum(r.keyring.shred(tenant, e.subject) for e in r.keyring.entries(tenant)
               if is_hash_key_entry(e.subject) and e.subject not in keep)


def _move_records(r: Rehasher, old: Scope, new: Scope, hasher: SubjectHasher, sparse: SparseEncoder,
                  subject_id: str) -> int:
    """Page by page from the start: what is moved leaves ``old``, so the next page is what remains."""
    moved = 0
    every = RecordFilter(statuses=None)
    while True:
        page, _ = r.index.scroll(old, where=every, limit=_PAGE)
        if not page:
            return moved
        items = [(replace(m, scope=new, blind_index=_blind_index(r, hasher, new.tenant, m.text, subject_id)),
                  sparse.encode_document(new, keyword_text(m.pseudo_text))) for m in page]
        r.index.rescope(old, new, items)
        moved += len(items)


def _blind_index(r: Rehasher, hasher: SubjectHasher, tenant: str, text: str, subject_id: str) -> tuple[str, ...]:
    """The record's tokens under the new key: its references and the identifiers it names."""
    return hasher.blind_tokens(tenant, [*linking_references(text, subject_id), *identifiers_in(r.pii, tenant, text)])


def _resealed_map(r: Rehasher, old: Scope, new: Scope) -> bytes | None:
    """The subject's pseudonym map sealed for its new hash (the hash is in the associated data)."""
    stored = r.catalog.pseudonym_map(old)
    if stored is None:
        return None
    return r.maps.seal(new, PseudonymMap.from_bytes(r.maps.open(old, stored[0])))


def _refuse_unregistered(r: Rehasher, tenant: str, known: set[str]) -> None:
    """A data key with no registry row is a subject whose id cannot be read back: re-hashing would
    orphan its records, so nothing starts."""
    unknown = [e for e in r.keyring.entries(tenant) if not is_hash_key_entry(e.subject) and e.subject not in known]
    if unknown:
        raise Conflict(f"{len(unknown)} subject(s) of the tenant have data keys but no registry entry; "
                       "their ids cannot be re-hashed", tenant=tenant)


def _delete_leftover_copies(r: Rehasher, tenant: str) -> int:
    """Key-store entries left under an old hash by an interrupted run: the same key id is stored under
    a registered subject's name, so the copy is redundant."""
    registered = {s.scope.subject for s in r.catalog.registered_subjects(tenant)}
    entries = r.keyring.entries(tenant)
    live_ids = {e.key_id for e in entries if e.subject in registered}
    leftovers = [e for e in entries
                 if e.subject not in registered and not is_hash_key_entry(e.subject) and e.key_id in live_ids]
    return sum(r.keyring.shred(tenant, e.subject) for e in leftovers)
