"""The wiring of store-wide operations on a built container: backups and restores, the in-process
scheduler, the hash-key rotation. Apart from ``carnet.bootstrap.wiring``, which builds the container itself."""

from __future__ import annotations

import threading
from collections.abc import Callable

import structlog

from carnet.adapters.sqlite.catalog import SqliteCatalog
from carnet.bootstrap.container import Container
from carnet.bootstrap.keys import build_keyring, build_kms
from carnet.bootstrap.stores import build_erasure_ledger
from carnet.crypto.subject_ids import KeyringSubjectIdSealer
from carnet.crypto.tenant_hasher import KmsSubjectHasher
from carnet.errors import Conflict
from carnet.ports import Kms, VectorIndex
from carnet.services.audit import SYSTEM_CHAIN
from carnet.services.backup.restore import RestoreTarget
from carnet.services.backup.snapshots import BackupReport, BackupSource
from carnet.services.lifecycle.rehash import Rehasher
from carnet.services.lifecycle.scheduler import Job, Scheduler
from carnet.services.locks import SubjectLocks
from carnet.settings.root import CatalogBackend, Settings, VectorBackend

log = structlog.get_logger(__name__)


def records_index(c: Container) -> VectorIndex:
    """The store under the sealing layer: records as stored, opened by no key (re-erasure deletes
    records whose key is already destroyed)."""
    from carnet.crypto.sealed_index import SealedIndex

    return c.deps.index.inner if isinstance(c.deps.index, SealedIndex) else c.deps.index


def backup_source(c: Container) -> BackupSource:
    """What ``create_backup`` reads from a container (the server's own, or one a command opened):
    the embedded default only. A Qdrant server and PostgreSQL have their own snapshots (docs/backup.md)."""
    from importlib.metadata import version

    from carnet.adapters.vectors.qdrant_edge import EdgeVectorIndex
    from carnet.errors import InvalidInput

    index, catalog, locks = records_index(c), c.deps.catalog, c.deps.locks
    if not isinstance(index, EdgeVectorIndex) or not isinstance(catalog, SqliteCatalog) \
            or not isinstance(locks, SubjectLocks):  # only in-process locks can pause every write
        raise InvalidInput("`carnet backup` covers the embedded default (qdrant-edge and SQLite); "
                           "back up a Qdrant server and PostgreSQL with their own snapshots (docs/backup.md)")
    return BackupSource(data_dir=c.settings.data_dir, snapshot_vectors=index.snapshot,
                        snapshot_catalog=catalog.snapshot, catalog=catalog, locks=locks, clock=c.deps.clock,
                        embedder_model=c.deps.embedder.model_id, dim=c.deps.embedder.dim,
                        vector_engine=f"qdrant-edge-py {version('qdrant-edge-py')}")


# The command as it runs (``--since`` is required): the time the restored snapshot was taken.
_REAPPLY = "`carnet backup reapply-erasures --since <when the snapshot was taken, ISO 8601>` (docs/backup.md)"


def restore_target(settings: Settings, *, kms: Kms | None = None) -> RestoreTarget:
    """What ``restore_backup`` needs: the data dir's stores (opened raw, on the staged copy), the key
    store and the erasure ledger. No embedder: nothing is embedded or opened."""
    from carnet.adapters.sqlite.intakes import SqliteIntakeStore
    from carnet.adapters.sqlite.procedures import SqliteTeamProcedures
    from carnet.adapters.vectors.qdrant_edge import EdgeVectorIndex, held
    from carnet.errors import InvalidInput

    if settings.vector_backend is not VectorBackend.EDGE:
        raise InvalidInput("`carnet backup restore` covers the embedded default; with a Qdrant server, recover "
                           f"its snapshot, then run {_REAPPLY}")
    if settings.catalog is not CatalogBackend.SQLITE:
        raise InvalidInput("`carnet backup restore` covers the embedded default; with PostgreSQL, pg_restore the "
                           f"catalog's dump, then run {_REAPPLY}")
    return RestoreTarget(data_dir=settings.data_dir, hold=held, open_index=EdgeVectorIndex,
                         open_catalog=SqliteCatalog, open_intakes=SqliteIntakeStore,
                         open_procedures=SqliteTeamProcedures,
                         keys=build_keyring(settings, kms or build_kms(settings)),
                         ledger=build_erasure_ledger(settings))


def build_scheduler(c: Container) -> Scheduler:
    """``carnet serve``'s maintenance every N hours, and backups every M hours (24 unless turned off), on the
    embedded store only (with a Qdrant server, CronJobs or timers run ``carnet maintain``). A scheduler
    without jobs starts nothing."""
    m = c.settings.maintenance
    jobs: list[Job] = []
    if m.scheduler and c.settings.vector_backend is VectorBackend.EDGE:
        jobs.append(Job("maintain", m.interval_hours * 3600, lambda stop: _scheduled_maintain(c, stop)))
        if m.backup_every_seconds and c.settings.catalog is CatalogBackend.SQLITE:  # daily by default
            jobs.append(Job("backup", m.backup_every_seconds, lambda _stop: _scheduled_backup(c)))
    scheduler = Scheduler(jobs, state_file=c.settings.data_dir / "scheduler.json",
                          startup_delay=m.startup_delay_seconds)
    c.metrics.watch_background("scheduler", lambda: scheduler.guard.errors)
    return scheduler


def _scheduled_maintain(c: Container, stop: Callable[[], bool]) -> None:
    """One pass through the facade's door, as ``carnet maintain`` (its counts: one entry per tenant)."""
    from carnet.services.door import operator

    c.facade.maintain_store(operator(SYSTEM_CHAIN, "scheduler:maintain", "admin"),
                            compact=c.settings.maintenance.compact, stop=stop)


def _scheduled_backup(c: Container) -> None:
    with c.audit.recorded(c.audit.event(tenant=SYSTEM_CHAIN, actor="scheduler:backup", action="backup.create")):
        report = backup_now(c, wait=True)
    log.info("scheduled_backup_done", records=report.records, bytes=report.bytes,
             paused_seconds=round(report.paused_seconds, 3))


_one_backup = threading.Lock()  # one store per server process: its backups run one at a time


def backup_now(c: Container, *, wait: bool = False) -> BackupReport:
    """The server's own backup, as its scheduler and ``POST /api/v1/admin/backup`` run it: ``create_backup``
    into the backup dir, then ``prune_backups`` to the number to keep. One at a time: a second caller
    waits (``wait``, the scheduler) or gets ``Conflict`` (an admin asking twice)."""
    from carnet.services.backup.snapshots import create_backup, prune_backups

    if not _one_backup.acquire(blocking=wait):
        raise Conflict("a backup is already running; ask again once it has finished")
    try:
        directory = c.settings.resolved_backup_dir
        report = create_backup(source=backup_source(c), output=directory)
        if c.settings.maintenance.backup_keep is not None:
            prune_backups(directory=directory, keep=c.settings.maintenance.backup_keep)
    finally:
        _one_backup.release()
    return report


def store_held(settings: Settings) -> bool:
    """Whether another process (``carnet serve``) owns the embedded shard, tested without opening it."""
    from carnet.adapters.vectors import edge_layout
    from carnet.adapters.vectors.qdrant_edge import held
    from carnet.errors import StoreLocked

    live = settings.data_dir / edge_layout.LIVE
    if settings.vector_backend is not VectorBackend.EDGE or not live.is_dir():
        return False
    try:
        with held(live):
            return False
    except StoreLocked:
        return True


def build_rehasher(c: Container) -> Rehasher:
    """What ``carnet keys rehash`` needs: the container's stores, and a hasher and sparse encoder on
    the new hash key."""
    from carnet.adapters.embedders.sparse_hash import HashedSparseEncoder
    from carnet.crypto.pseudonym_store import SealedPseudonymMaps

    return Rehasher(
        index=c.deps.index, catalog=c.deps.catalog, keyring=c.keyring, sealer=KeyringSubjectIdSealer(c.keyring),
        hasher_on=lambda entry: KmsSubjectHasher.pinned(c.keyring, c.kms, entry), sparse_on=HashedSparseEncoder,
        maps=SealedPseudonymMaps(c.deps.catalog, c.keyring), pii=c.deps.pii, procedures=c.facade.procedures,
    )

