"""Restoring a backup of the embedded default, without bringing back anyone erased since.

``restore_backup`` is offline: it holds the shard's owner lock (``StoreLocked`` while ``carnet serve``
runs), extracts the archive into a staging directory inside the data dir, checks every checksum,
refuses a backup older than a hash-key rotation of one of its tenants, applies again every erasure
the ledger records from the backup's time on (``services/rights/reerase.py``) to the staged stores, and only
then swaps them in, one rename each, moving the current ones aside (reported: delete them once
checked). Nothing in the data dir changes before the staged copy is verified and re-erased.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from carnet.crypto.keyring import Keyring
from carnet.crypto.tenant_hasher import is_hash_key_entry
from carnet.errors import RestoreRefused
from carnet.fileio import fsync_dir
from carnet.ports import Catalog, ErasureEntry, ErasureLedger, IntakeStore, TeamProcedures, VectorIndex
from carnet.services.backup.archive import CATALOG, VECTORS, Manifest, extract_verified
from carnet.services.backup.snapshots import Progress
from carnet.services.rights.reerase import ReerasureReport, reapply_erasures

# What a restore moves aside. The catalog's companions go with it (an old WAL replayed into a restored
# catalog corrupts it), and so does a shard `carnet reembed` was building from the replaced data (a
# resumed reembed would otherwise switch it in).
_LIVE = (VECTORS, CATALOG, f"{CATALOG}-wal", f"{CATALOG}-shm", f"{CATALOG}-journal", "vectors.next")


class CompactableIndex(VectorIndex, Protocol):
    def compact(self) -> bool:
        """Rewrite segments without their deleted points (their sealed payloads leave the files)."""
        ...


@dataclass(frozen=True, slots=True)
class RestoreTarget:
    """What a restore works on besides the archive; ``bootstrap.ops.restore_target`` builds it."""

    data_dir: Path
    hold: Callable[[Path], AbstractContextManager[None]]  # the shard's owner lock; StoreLocked when taken
    open_index: Callable[[Path, int], CompactableIndex]  # the raw shard (nothing opened: keys may be gone)
    open_catalog: Callable[[Path], Catalog]
    open_intakes: Callable[[Path], IntakeStore]  # the queue, in the catalog's file on the embedded default
    keys: Keyring
    ledger: ErasureLedger
    open_procedures: Callable[[Path], TeamProcedures] | None = None  # in the catalog's file on the embedded default


@dataclass(frozen=True, slots=True)
class RestoreReport:
    archive: Path
    backup_created_at: datetime
    records: int  # in the backup, before the erasures were applied again
    embedder_model: str  # the vectors' model: the server refuses to start on another one
    previous_data: Path | None  # the stores that were replaced, moved aside: delete once checked
    reerased: ReerasureReport
    seconds: float

    def as_dict(self) -> dict[str, object]:
        return {"archive": str(self.archive), "backup_created_at": self.backup_created_at.isoformat(),
                "records": self.records, "embedder": self.embedder_model,
                "previous_data": str(self.previous_data) if self.previous_data else None,
                "reerased": self.reerased.as_dict(), "seconds": round(self.seconds, 3)}


def restore_backup(*, archive: Path, target: RestoreTarget, progress: Progress | None = None) -> RestoreReport:
    """Replace the data dir's stores with the archive's, minus every erasure made since it was taken.

    Offline: raises ``StoreLocked`` while a server holds the store. Nothing changes in the data dir
    until the archive is verified and the erasures applied to the staged copy."""
    say = progress or (lambda _m: None)
    started = time.perf_counter()
    data_dir = target.data_dir
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    fresh = not any((data_dir / name).exists() for name in _LIVE)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    staging = data_dir / f".restore-{stamp}"
    with target.hold(data_dir / VECTORS):
        try:
            manifest = extract_verified(archive, staging)
            say(f"restore: {archive} verified ({len(manifest.members)} members, {manifest.records} records)")
            entries = target.ledger.entries()
            _refuse_stale_hash_keys(manifest, target.keys, entries)
            reerased = _reerase(staging, manifest, target)
            say(f"restore: {reerased.applied} erasure(s) since the backup applied again "
                f"({reerased.records_deleted} records deleted)")
            aside = _swap(data_dir, staging, stamp, fresh=fresh)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return RestoreReport(archive, manifest.created_at, manifest.records, manifest.embedder_model, aside, reerased,
                         time.perf_counter() - started)


def _refuse_stale_hash_keys(manifest: Manifest, keys: Keyring, entries: list[ErasureEntry]) -> None:
    """A backup's subject hashes are made with the hash key current when it was taken. A later
    ``carnet keys rehash`` destroyed that key and filed every data key under a new hash: the backup's
    records could neither be found nor opened, and the ledger's later entries (new hashes) would not
    match them. Refuse instead; a tenant whose keys were all shredded is let through."""
    shredded = {e.tenant for e in entries if e.subject is None}
    for tenant, generation in sorted(manifest.hash_keys.items()):
        if keys.exists(tenant, generation):
            continue
        if any(is_hash_key_entry(k.subject) for k in keys.entries(tenant)):
            raise RestoreRefused(f"tenant {tenant}: this backup predates a hash-key rotation (`carnet keys rehash`); "
                                 "its subjects can no longer be matched. Restore a backup taken after it.",
                                 tenant=tenant)
        if tenant not in shredded:
            raise RestoreRefused(f"tenant {tenant}: the key store holds no hash key for it. Is this the key store "
                                 "(CARNET_KEY_DIR or Vault) of the deployment that made the backup?", tenant=tenant)


def _reerase(staging: Path, manifest: Manifest, target: RestoreTarget) -> ReerasureReport:
    """Opening the staged shard also proves it loads, before anything is swapped in."""
    index = target.open_index(staging / VECTORS, manifest.dim)
    try:
        catalog = target.open_catalog(staging / CATALOG)
        intakes = target.open_intakes(staging / CATALOG)
        procedures = target.open_procedures(staging / CATALOG) if target.open_procedures is not None else None
        try:
            report = reapply_erasures(ledger=target.ledger, index=index, catalog=catalog, keys=target.keys,
                                      intakes=intakes, since=manifest.created_at, procedures=procedures)
        finally:
            if procedures is not None:
                procedures.close()
            intakes.close()
            catalog.close()
        if report.records_deleted:
            index.compact()
    finally:
        index.close()
    return report


def _swap(data_dir: Path, staging: Path, stamp: str, *, fresh: bool) -> Path | None:
    """Current stores aside, staged ones in: one rename each, all inside the data dir (one file
    system, a mount point works). A crash half-way leaves both sets whole, named: move them by hand
    or restore again."""
    aside = data_dir / f".pre-restore-{stamp}"
    if fresh:  # only the lock file this restore created
        shutil.rmtree(data_dir / VECTORS)
    else:
        aside.mkdir(mode=0o700)
        for name in _LIVE:
            if (data_dir / name).exists():
                os.replace(data_dir / name, aside / name)
    for name in sorted(os.listdir(staging)):
        os.replace(staging / name, data_dir / name)
    fsync_dir(data_dir)
    return None if fresh else aside
