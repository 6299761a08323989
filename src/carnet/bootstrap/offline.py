"""The wiring of offline commands that work on a store's files or schema rather than on a running
service: the audit trail's file, PostgreSQL migrations, and the re-embedding switch-over. The CLI
calls these and translates their errors; it builds no adapter itself."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from carnet.bootstrap.keys import build_sealed_index
from carnet.bootstrap.ops import records_index
from carnet.bootstrap.stores import build_audit_log, build_index, postgres_conninfo
from carnet.bootstrap.wiring import build
from carnet.errors import Conflict, InvalidInput, NotFound
from carnet.ports import AuditLog, Embedder, VectorIndex
from carnet.services.lifecycle.reembed import ReembedReport, reembed
from carnet.settings.root import CatalogBackend, Settings

if TYPE_CHECKING:
    from carnet.adapters.postgres.migrate import Migration, SchemaState
    from carnet.adapters.postgres.pool import Connection

Progress = Callable[[str, int, int], None]


def open_audit_log(settings: Settings) -> AuditLog:
    """The trail as stored: PostgreSQL's ``carnet_audit`` schema, or the SQLite file, which must exist
    (a command that reads the trail never creates an empty one)."""
    if settings.catalog is not CatalogBackend.POSTGRES and not settings.resolved_audit_path.exists():
        raise NotFound(f"no audit trail at {settings.resolved_audit_path}")
    return build_audit_log(settings)


@contextmanager
def _schema_connection(settings: Settings) -> Iterator[Connection]:
    from carnet.adapters.postgres.migrate import connected

    if settings.catalog is not CatalogBackend.POSTGRES:
        raise InvalidInput("CARNET_CATALOG is not postgres (SQLite creates and upgrades its own tables)")
    with connected(postgres_conninfo(settings, "db")) as conn:
        yield conn


def migrate_schema(settings: Settings) -> tuple[list[Migration], SchemaState]:
    """Apply the pending migrations (under the advisory lock); what was applied, and the state after."""
    from carnet.adapters.postgres import migrate as migrations

    with _schema_connection(settings) as conn:
        applied = migrations.migrate(conn)
        return applied, migrations.state(conn)


def schema_state(settings: Settings) -> SchemaState:
    from carnet.adapters.postgres import migrate as migrations

    with _schema_connection(settings) as conn:
        return migrations.state(conn)


def reembed_edge(settings: Settings, new: Embedder, *, keep_old: bool, progress: Progress | None = None,
                 current: Embedder | None = None) -> dict[str, object]:
    """Build ``vectors.next`` beside the live shard, check it holds as many points, then switch.
    ``current``: the live model, when already loaded (tests); built from the settings otherwise.
    Raises ``StoreLocked`` while a server holds the live shard."""
    from carnet.adapters.vectors import edge_layout
    from carnet.adapters.vectors.qdrant_edge import EdgeVectorIndex, held
    from carnet.crypto.sealed_index import SealedIndex

    container = build(settings, embedder=current)
    data_dir = settings.data_dir
    try:
        path = edge_layout.start_build(data_dir)
        inner = EdgeVectorIndex(path, new.dim)
        edge_layout.write_model(path, edge_layout.ShardModel(new.model_id, new.dim))
        try:
            report = reembed(container.deps, target=SealedIndex(inner, container.keyring, container.kms),
                             embedder=new, progress=progress)
            old_points, new_points = _points(records_index(container)), inner.points_count()
        finally:
            inner.close()
        if old_points is not None and old_points != new_points:
            raise Conflict(f"the new shard holds {new_points} points, the live one {old_points} (records of "
                           "subjects missing from the registry?): not switching; the live shard is untouched")
    finally:
        container.close()
    with held(data_dir / edge_layout.LIVE):  # no server may open the live shard while it is swapped
        old = edge_layout.switch(data_dir, datetime.now(UTC))
    if not keep_old:
        shutil.rmtree(old)
    return {**report.as_dict(), "switched": True, "previous_shard": str(old) if keep_old else None}


def _points(index: VectorIndex) -> int | None:
    from carnet.adapters.vectors.qdrant_edge import EdgeVectorIndex

    return index.points_count() if isinstance(index, EdgeVectorIndex) else None


def reembed_server(settings: Settings, target: Settings, new: Embedder, collection: str | None, *,
                   progress: Progress | None = None) -> dict[str, object]:
    """Build a new collection on the same server; pointing the service at it is the operator's
    switch (``CARNET_QDRANT__COLLECTION``, or a Qdrant alias moved to it)."""
    if not collection or collection == settings.qdrant.collection:
        raise InvalidInput("with the Qdrant server backend, give --collection: a new collection to build")
    target = target.model_copy(update={"qdrant": target.qdrant.model_copy(update={"collection": collection})})
    container = build(settings)
    try:
        index, _, _ = build_sealed_index(target, build_index(target, new.dim), container.kms)
        try:
            report: ReembedReport = reembed(container.deps, target=index, embedder=new, progress=progress)
        finally:
            index.close()
    finally:
        container.close()
    return {**report.as_dict(), "switched": False, "collection": collection,
            "next": f"set CARNET_QDRANT__COLLECTION={collection} (or move your alias to it) with the new embedder"}
