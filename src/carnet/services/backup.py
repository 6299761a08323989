"""Backups of the embedded default (qdrant-edge shard + SQLite catalog), and their restore.

**Create** (``create_backup``) works on a live store: it pauses every write (all subject locks, so
reads go on), flushes and copies the shard's files, takes SQLite's online backup of the catalog,
notes the time, and lets writes resume; the archive is then checksummed and compressed from that
private copy, writes flowing meanwhile. The pause lasts as long as two local copies (tens of
milliseconds for thousands of records). ``carnet backup create`` calls it on a store it opened
itself; the server's scheduler calls it with its own container, through ``bootstrap.backup_source``.

What a backup holds: sealed texts, vectors, keyed hashes and metadata. Never a key: data keys stay
wrapped in the key store, tenant keys in the KMS (the manifest says so). Nor the audit trail, nor the
erasure ledger: a restore must rewind neither.

**Restore** (``restore_backup``) is offline: it holds the shard's owner lock (``StoreLocked`` while
``carnet serve`` runs), extracts into a staging directory inside the data dir, checks every checksum,
refuses a backup older than a hash-key rotation of one of its tenants, applies again every erasure
the ledger records from the backup's time on (``services/reerase.py``), and only then swaps the
stores in, one rename each, moving the current ones aside (reported, to delete once checked).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from carnet import __version__
from carnet.crypto.keyring import Keyring
from carnet.crypto.tenant_hasher import TENANT_ENTRY, is_hash_key_entry
from carnet.errors import BackupCorrupt, InvalidInput, RestoreRefused
from carnet.fileio import fsync_dir
from carnet.ports import Catalog, Clock, ErasureEntry, ErasureLedger, VectorIndex
from carnet.services.backup_archive import (
    CATALOG,
    VECTORS,
    Manifest,
    extract_verified,
    inventory,
    read_manifest,
    write_archive,
)
from carnet.services.locks import SubjectLocks
from carnet.services.reerase import ReerasureReport, reapply_erasures

Progress = Callable[[str], None]
SUFFIXES = (".tar.gz", ".tar")
# What a restore moves aside. The catalog's companions go with it (an old WAL replayed into a restored
# catalog corrupts it), and so does a shard `carnet reembed` was building from the replaced data (a
# resumed reembed would otherwise switch it in).
_LIVE = (VECTORS, CATALOG, f"{CATALOG}-wal", f"{CATALOG}-shm", f"{CATALOG}-journal", "vectors.next")


@dataclass(frozen=True, slots=True)
class BackupSource:
    """What a backup reads, from a running server or a store just opened; ``bootstrap.backup_source``
    builds it from a container."""

    data_dir: Path
    snapshot_vectors: Callable[[Path], int]  # the shard's files into a new directory; returns its point count
    snapshot_catalog: Callable[[Path], None]  # a consistent copy of the catalog into a new file
    catalog: Catalog
    locks: SubjectLocks
    clock: Clock
    embedder_model: str
    dim: int
    vector_engine: str


@dataclass(frozen=True, slots=True)
class BackupReport:
    path: Path
    created_at: datetime
    records: int
    bytes: int
    paused_seconds: float  # how long writes waited
    seconds: float

    def as_dict(self) -> dict[str, object]:
        return {"path": str(self.path), "created_at": self.created_at.isoformat(), "records": self.records,
                "bytes": self.bytes, "paused_seconds": round(self.paused_seconds, 3),
                "seconds": round(self.seconds, 3)}


def create_backup(*, source: BackupSource, output: Path, compress: bool = True,
                  progress: Progress | None = None) -> BackupReport:
    """A consistent archive of the store at ``output``: a new ``.tar.gz`` or ``.tar`` file (its suffix
    says whether it is compressed), or a directory to write ``carnet-backup-<UTC time>.tar.gz`` in
    (``.tar`` without ``compress``).

    Safe while serving: writes wait for the copy of the stores (``paused_seconds``), reads do not."""
    say = progress or (lambda _m: None)
    started = time.perf_counter()
    target, compress = _archive_path(output, source.clock.now(), compress)
    _refuse_inside(target, source.data_dir)
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    staging = Path(tempfile.mkdtemp(prefix=".carnet-backup-", dir=target.parent))
    try:
        frozen = time.perf_counter()
        with source.locks.paused():
            created_at = source.clock.now()
            records = source.snapshot_vectors(staging / VECTORS)
            source.snapshot_catalog(staging / CATALOG)
            hash_keys = {t: source.catalog.hash_key_entry(t) or TENANT_ENTRY for t in source.catalog.tenants()}
        paused = time.perf_counter() - frozen
        say(f"backup: stores copied ({records} records, writes paused {paused:.3f} s)")
        directories, members = inventory(staging)
        manifest = Manifest(created_at, __version__, source.vector_engine, source.embedder_model, source.dim,
                            records, hash_keys, directories, members)
        size = write_archive(staging, manifest, target, compress=compress)
        fsync_dir(target.parent)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    say(f"backup: {target} written ({size} bytes)")
    return BackupReport(target, created_at, records, size, paused, time.perf_counter() - started)


@dataclass(frozen=True, slots=True)
class BackupListing:
    path: Path
    bytes: int
    manifest: Manifest | None
    error: str | None = None  # why the manifest could not be read

    def as_dict(self) -> dict[str, object]:
        m = self.manifest
        head: dict[str, object] = {"path": str(self.path), "bytes": self.bytes}
        if m is None:
            return {**head, "error": self.error}
        return {**head, "created_at": m.created_at.isoformat(), "records": m.records,
                "carnet_version": m.carnet_version, "embedder": m.embedder_model, "tenants": sorted(m.hash_keys)}


def list_backups(*, directory: Path) -> list[BackupListing]:
    """The archives in ``directory``, oldest first (by their manifest's time); unreadable ones last."""
    readable: list[tuple[datetime, BackupListing]] = []
    unreadable: list[BackupListing] = []
    if not directory.is_dir():
        return []
    for path in sorted(p for p in directory.iterdir() if p.is_file() and p.name.endswith(SUFFIXES)
                       and not p.name.startswith(".")):
        try:
            manifest = read_manifest(path)
        except BackupCorrupt as exc:
            unreadable.append(BackupListing(path, path.stat().st_size, None, exc.message))
        else:
            readable.append((manifest.created_at, BackupListing(path, path.stat().st_size, manifest)))
    return [b for _, b in sorted(readable, key=lambda pair: pair[0])] + unreadable


def prune_backups(*, directory: Path, keep: int) -> list[Path]:
    """Delete all but the ``keep`` newest readable archives; returns what was deleted. Unreadable files
    are left for a human. Backups hold erased subjects' sealed records until they are pruned."""
    if keep < 1:
        raise InvalidInput("keep at least one backup")
    readable = [b for b in list_backups(directory=directory) if b.manifest is not None]
    doomed = [b.path for b in readable[: max(0, len(readable) - keep)]]
    for path in doomed:
        path.unlink()
    return doomed


class CompactableIndex(VectorIndex, Protocol):
    def compact(self) -> bool:
        """Rewrite segments without their deleted points (their sealed payloads leave the files)."""
        ...


@dataclass(frozen=True, slots=True)
class RestoreTarget:
    """What a restore works on besides the archive; ``bootstrap.restore_target`` builds it."""

    data_dir: Path
    hold: Callable[[Path], AbstractContextManager[None]]  # the shard's owner lock; StoreLocked when taken
    open_index: Callable[[Path, int], CompactableIndex]  # the raw shard (nothing opened: keys may be gone)
    open_catalog: Callable[[Path], Catalog]
    keys: Keyring
    ledger: ErasureLedger


@dataclass(frozen=True, slots=True)
class RestoreReport:
    archive: Path
    backup_created_at: datetime
    records: int  # in the backup, before the erasures were applied again
    previous_data: Path | None  # the stores that were replaced, moved aside: delete once checked
    reerased: ReerasureReport
    seconds: float

    def as_dict(self) -> dict[str, object]:
        return {"archive": str(self.archive), "backup_created_at": self.backup_created_at.isoformat(),
                "records": self.records, "previous_data": str(self.previous_data) if self.previous_data else None,
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
    return RestoreReport(archive, manifest.created_at, manifest.records, aside, reerased,
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
        try:
            report = reapply_erasures(ledger=target.ledger, index=index, catalog=catalog, keys=target.keys,
                                      since=manifest.created_at)
        finally:
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


def _archive_path(output: Path, now: datetime, compress: bool) -> tuple[Path, bool]:
    if output.is_dir() or not output.name.endswith(SUFFIXES):
        if output.exists() and not output.is_dir():
            raise InvalidInput(f"{output} exists and is not a directory")
        suffix = ".tar.gz" if compress else ".tar"
        return output / f"carnet-backup-{now.astimezone(UTC).strftime('%Y%m%dT%H%M%S%fZ')}{suffix}", compress
    if output.exists():
        raise InvalidInput(f"{output} already exists")
    return output, output.name.endswith(".tar.gz")


def _refuse_inside(target: Path, data_dir: Path) -> None:
    if target.resolve().is_relative_to(data_dir.resolve()):
        raise InvalidInput("write backups outside the data dir (a restore moves the data dir's stores)")
