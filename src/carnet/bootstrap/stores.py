"""The stores, chosen from settings: the catalog (SQLite or PostgreSQL), the vector store (qdrant-edge or a
Qdrant server), the audit log, the intake queue, team procedures, subject locks and the erasure ledger."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import structlog

from carnet.adapters.kms.dev_keys import dev_api_key_pepper
from carnet.adapters.sqlite.catalog import SqliteCatalog
from carnet.bootstrap.container import ControlPlane
from carnet.domain.records import RetentionClass, RetentionStart, Scope
from carnet.domain.retention import RetentionPolicy
from carnet.ports import (
    AuditLog,
    Catalog,
    ErasureLedger,
    IntakeStore,
    SubjectLock,
    TeamProcedures,
    VectorIndex,
)
from carnet.private_fs import private_dir
from carnet.services.locks import SubjectLocks
from carnet.settings.root import (
    CatalogBackend,
    QdrantSharding,
    Settings,
    VectorBackend,
)

if TYPE_CHECKING:  # psycopg is optional: imported only when CARNET_CATALOG=postgres
    from carnet.adapters.postgres.pool import Pool


log = structlog.get_logger(__name__)


def build_control_plane(settings: Settings) -> ControlPlane:
    """The catalog and the API-key pepper: all `carnet apikey create` needs (not the vector store)."""
    private_dir(settings.data_dir)
    if settings.api_key_pepper is not None:
        pepper = settings.api_key_pepper.get_secret_value().encode()
    else:  # development only: production settings refuse to start without a pepper
        pepper = dev_api_key_pepper(settings.resolved_key_dir)
    return ControlPlane(build_catalog(settings), pepper)


def build_catalog(settings: Settings) -> Catalog:
    """SQLite in the data dir (embedded), or PostgreSQL's ``carnet`` schema (several nodes)."""
    if settings.catalog is CatalogBackend.POSTGRES:
        from carnet.adapters.postgres.catalog import PostgresCatalog

        return PostgresCatalog(_postgres_pool(settings, "catalog"))
    return SqliteCatalog(settings.data_dir / "catalog.sqlite3")


def postgres_conninfo(settings: Settings, store: str) -> str:
    """libpq's connection string from ``CARNET_POSTGRES__*`` (``store`` names the connection in
    ``pg_stat_activity``: carnet-catalog, carnet-intakes, carnet-audit, carnet-db)."""
    from carnet.adapters.postgres.pool import conninfo

    pg = settings.postgres
    return conninfo(dsn=pg.dsn.get_secret_value() if pg.dsn else None, host=pg.host, port=pg.port,
                    dbname=pg.dbname, user=pg.user, password=pg.password.get_secret_value() if pg.password else None,
                    sslmode=pg.sslmode.value, ca_cert=pg.ca_cert, client_cert=pg.client_cert,
                    client_key=pg.client_key, connect_timeout=pg.connect_timeout, application_name=f"carnet-{store}")


def _postgres_pool(settings: Settings, store: str) -> Pool:
    """One pool per store (catalog, intakes, audit), each migrating the schema first when it is behind."""
    from carnet.adapters.postgres.pool import open_pool

    pg = settings.postgres
    return open_pool(postgres_conninfo(settings, store), size=pg.pool_size, timeout=pg.connect_timeout,
                     migrate=pg.auto_migrate, name=store)


def build_index(settings: Settings, dim: int, *, model_id: str | None = None) -> VectorIndex:
    """With ``model_id``, the embedded shard must have been built by that model (``edge_layout``)."""
    if settings.vector_backend is VectorBackend.EDGE:
        from carnet.adapters.vectors import edge_layout
        from carnet.adapters.vectors.qdrant_edge import EdgeVectorIndex

        cached = settings.record_cache_size
        if model_id is None:
            return EdgeVectorIndex(settings.data_dir / edge_layout.LIVE, dim, cached=cached)
        live = edge_layout.open_live(settings.data_dir, model_id=model_id, dim=dim)
        index = EdgeVectorIndex(live, dim, cached=cached)
        edge_layout.adopt(settings.data_dir / edge_layout.LIVE, edge_layout.ShardModel(model_id, dim))
        return index
    from carnet.adapters.vectors.qdrant_distribution import Distribution
    from carnet.adapters.vectors.qdrant_server import connect

    q = settings.qdrant
    consistency = q.read_consistency if isinstance(q.read_consistency, int) else q.read_consistency.value
    distribution = Distribution(shard_number=q.shard_number, replication_factor=q.replication_factor,
                                write_consistency_factor=q.write_consistency_factor,
                                ordering=q.write_ordering.value, consistency=consistency,
                                tiered=q.sharding is QdrantSharding.TIERED, fallback_shard_key=q.fallback_shard_key)
    return connect(
        url=q.url,
        api_key=q.api_key.get_secret_value() if q.api_key else None,
        ca_cert=q.ca_cert,
        client_cert=(q.client_cert, q.client_key) if q.client_cert is not None and q.client_key is not None else None,
        collection=q.collection,
        dim=dim,
        prefer_grpc=q.prefer_grpc,
        distribution=distribution,
    )


def build_retention(settings: Settings) -> RetentionPolicy:
    """The tenants' retention classes; every tenant also has ``default`` unless it defines its own."""
    return RetentionPolicy(
        {tenant: {name: RetentionClass(name, c.days, RetentionStart(c.after.value)) for name, c in classes.items()}
         for tenant, classes in settings.retention.items()},
        RetentionClass("default", settings.default_retention_days),
    )


def build_audit_log(settings: Settings) -> AuditLog:
    """Its own SQLite file (``CARNET_AUDIT_PATH``), or PostgreSQL's ``carnet_audit`` schema: apart from
    the catalog either way, so restoring the catalog never rewinds it."""
    if settings.catalog is CatalogBackend.POSTGRES:
        from carnet.adapters.postgres.audit import PostgresAuditLog

        return PostgresAuditLog(_postgres_pool(settings, "audit"))
    from carnet.adapters.sqlite.audit import SqliteAuditLog

    return SqliteAuditLog(settings.resolved_audit_path)


def build_intake_store(settings: Settings) -> IntakeStore:
    """The queue of intakes: the catalog's SQLite file on the embedded default, else PostgreSQL's
    ``carnet.intakes``, shared by the `carnet worker` processes of every node."""
    if settings.catalog is CatalogBackend.POSTGRES:
        from carnet.adapters.postgres.intakes import PostgresIntakeStore

        return PostgresIntakeStore(_postgres_pool(settings, "intakes"))
    from carnet.adapters.sqlite.intakes import SqliteIntakeStore

    return SqliteIntakeStore(settings.data_dir / "catalog.sqlite3")


def build_team_procedures(settings: Settings) -> TeamProcedures:
    """The team procedures: the catalog's SQLite file on the embedded default, else PostgreSQL's
    ``carnet.team_procedures`` (migration 0004), shared by every node."""
    if settings.catalog is CatalogBackend.POSTGRES:
        from carnet.adapters.postgres.procedures import PostgresTeamProcedures

        return PostgresTeamProcedures(_postgres_pool(settings, "procedures"))
    from carnet.adapters.sqlite.procedures import SqliteTeamProcedures

    return SqliteTeamProcedures(settings.data_dir / "catalog.sqlite3")


def build_subject_locks(settings: Settings, *, on_acquire: Callable[[Scope], None]) -> SubjectLock:
    """Per-subject write serialisation: in-process on the embedded default (one process owns the
    stores), PostgreSQL advisory locks when the control plane is PostgreSQL, so API servers and
    `carnet worker` processes on every node take the same lock (docs/architecture.md). There,
    ``on_acquire`` runs each time this process takes a subject's lock."""
    if settings.catalog is CatalogBackend.POSTGRES:
        from carnet.adapters.postgres.locks import PostgresSubjectLocks

        return PostgresSubjectLocks(_postgres_pool(settings, "locks"), timeout=settings.postgres.lock_timeout,
                                    on_acquire=on_acquire)
    return SubjectLocks()


def build_erasure_ledger(settings: Settings) -> ErasureLedger:
    """The erasure ledger: a file beside the keys by default, never inside the data dir; with the
    PostgreSQL control plane, the table ``carnet_erasures.entries`` shared by every process, which
    takes over the file ledger once if one is found at ``CARNET_ERASURE_LEDGER``'s path (an upgrade
    loses no erasure; the file is renamed ``….imported-<time>``)."""
    from carnet.adapters.local.erasure_ledger import FileErasureLedger

    file = FileErasureLedger(settings.resolved_erasure_ledger, data_dir=settings.data_dir)
    if settings.catalog is not CatalogBackend.POSTGRES:
        return file
    from carnet.adapters.postgres.erasure_ledger import PostgresErasureLedger

    ledger = PostgresErasureLedger(_postgres_pool(settings, "ledger"))
    try:
        kept = ledger.take_over(file)
    except BaseException:
        ledger.close()
        raise
    if kept is not None:
        log.warning("erasure_ledger_imported", into="postgresql", file_renamed_to=str(kept))
    return ledger
