"""Backups of the embedded default (qdrant-edge shard + SQLite catalog): create, list, prune.

``create_backup`` works on a live store: it pauses every write (all subject locks, so reads go on),
flushes and copies the shard's files, takes SQLite's online backup of the catalog, notes the time,
and lets writes resume; the archive is then checksummed and compressed from that private copy,
writes flowing meanwhile. The pause lasts as long as the two local copies (0.4 s at 20k records).
``carnet backup create`` calls it on a store it opened itself; the server's scheduler calls it with
its own container, through ``bootstrap.ops.backup_source``.

What a backup holds: sealed texts, vectors, keyed hashes and metadata. Never a key: data keys stay
wrapped in the key store, tenant keys in the KMS (the manifest says so). Nor the audit trail, nor the
erasure ledger: a restore must rewind neither (``services/backup/restore.py``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from carnet import __version__
from carnet.crypto.tenant_hasher import TENANT_ENTRY
from carnet.errors import BackupCorrupt, InvalidInput
from carnet.fileio import fsync_dir
from carnet.ports import Catalog, Clock
from carnet.services.backup.archive import CATALOG, VECTORS, Manifest, inventory, read_manifest, write_archive
from carnet.services.locks import SubjectLocks

Progress = Callable[[str], None]
SUFFIXES = (".tar.gz", ".tar")


@dataclass(frozen=True, slots=True)
class BackupSource:
    """What a backup reads, from a running server or a store just opened; ``bootstrap.ops.backup_source``
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
    work = Path(tempfile.mkdtemp(prefix=".carnet-backup-", dir=target.parent))  # same file system as target
    try:
        manifest, paused = _freeze(source, work / "stores")
        say(f"backup: stores copied ({manifest.records} records, writes paused {paused:.3f} s)")
        size = write_archive(work / "stores", manifest, work / "archive", compress=compress)
        _publish(work / "archive", target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    say(f"backup: {target} written ({size} bytes)")
    return BackupReport(target, manifest.created_at, manifest.records, size, paused, time.perf_counter() - started)


def _freeze(source: BackupSource, stores: Path) -> tuple[Manifest, float]:
    """The stores copied while no write runs, and the manifest of that copy; how long writes waited."""
    stores.mkdir(mode=0o700)
    frozen = time.perf_counter()
    with source.locks.paused():
        created_at = source.clock.now()
        records = source.snapshot_vectors(stores / VECTORS)
        source.snapshot_catalog(stores / CATALOG)
        hash_keys = {t: source.catalog.hash_key_entry(t) or TENANT_ENTRY for t in source.catalog.tenants()}
    paused = time.perf_counter() - frozen
    directories, members = inventory(stores)
    return Manifest(created_at, __version__, source.vector_engine, source.embedder_model, source.dim, records,
                    hash_keys, directories, members), paused


def _publish(archive: Path, target: Path) -> None:
    """The finished archive under its name, never over another file: a crash while writing leaves no
    half archive under a backup's name. A hard link where the file system has them, else a rename."""
    try:
        os.link(archive, target)
    except FileExistsError as exc:
        raise InvalidInput(f"{target} already exists") from exc
    except OSError:
        if target.exists():
            raise InvalidInput(f"{target} already exists") from None
        os.replace(archive, target)
    fsync_dir(target.parent)


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
