"""Numbered SQL migrations of the PostgreSQL control plane, and the table that records them.

Migrations are the files ``migrations/NNNN_name.sql`` shipped in the package, applied in order, each
in its own transaction with its row in ``carnet.schema_migrations`` (version, name, sha256 of the
file, when). Several processes may start at once (API pods, workers): the first one to take the
advisory lock applies what is missing while the others wait for it, then find nothing left to do.

An applied migration whose file has changed since is refused (the schema is no longer what the code
expects); a version the code does not know (a newer Carnet migrated the database during a rolling
upgrade) is only reported: migrations add, so older code keeps working beside them."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from importlib import resources
from typing import TYPE_CHECKING

from carnet.errors import DependencyUnavailable

if TYPE_CHECKING:
    from carnet.adapters.postgres.pool import Connection

# pg_advisory_lock's key for "migrating the control plane" (bigint keyspace; the intake queue's
# per-subject locks use the two-int keyspace, so the two never collide).
MIGRATION_LOCK = 0x63_61_72_6E_65_74_00_01  # "carnet", 1

_FILE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")

_BOOTSTRAP = """
CREATE SCHEMA IF NOT EXISTS carnet;
CREATE TABLE IF NOT EXISTS carnet.schema_migrations (
    version integer PRIMARY KEY,
    name text NOT NULL,
    checksum text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);
"""


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Applied:
    version: int
    name: str
    checksum: str
    applied_at: datetime


@dataclass(frozen=True, slots=True)
class SchemaState:
    """What the database holds against what this Carnet ships."""

    applied: tuple[Applied, ...]
    pending: tuple[Migration, ...]
    changed: tuple[int, ...]  # applied versions whose shipped file differs from what was applied
    unknown: tuple[int, ...]  # applied versions this Carnet does not ship (a newer one migrated)

    @property
    def current(self) -> bool:
        return not self.pending and not self.changed


def shipped() -> list[Migration]:
    """The migrations in the package, in order; their versions must run 1, 2, 3… without a gap."""
    found = []
    for item in resources.files("carnet.adapters.postgres.migrations").iterdir():
        match = _FILE.match(item.name)
        if match:
            found.append(Migration(int(match[1]), match[2], item.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    if [m.version for m in found] != list(range(1, len(found) + 1)):
        raise RuntimeError(f"migrations must be numbered 1..n without gaps: {[m.version for m in found]}")
    return found


def state(conn: Connection) -> SchemaState:
    """Read-only: ``SELECT … FROM carnet.schema_migrations`` (nothing applied if it does not exist)."""
    applied: list[Applied] = []
    table = conn.execute("SELECT to_regclass('carnet.schema_migrations')").fetchone()
    if table is not None and table[0] is not None:
        rows = conn.execute("SELECT version, name, checksum, applied_at FROM carnet.schema_migrations"
                            " ORDER BY version").fetchall()
        applied = [Applied(r[0], r[1], r[2], r[3]) for r in rows]
    ours = {m.version: m for m in shipped()}
    done = {a.version: a for a in applied}
    return SchemaState(
        applied=tuple(applied),
        pending=tuple(m for v, m in ours.items() if v not in done),
        changed=tuple(v for v, a in done.items() if v in ours and ours[v].checksum != a.checksum),
        unknown=tuple(v for v in done if v not in ours),
    )


def migrate(conn: Connection) -> list[Migration]:
    """Apply the pending migrations under ``pg_advisory_lock``; return those this call applied.

    ``conn`` must be in autocommit mode (each migration opens its own transaction)."""
    if not conn.autocommit:
        raise ValueError("migrate needs an autocommit connection")
    current = state(conn)
    _refuse_changed(current)
    if not current.pending:  # the usual start: one read, no lock
        return []
    conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
    try:
        conn.execute(_BOOTSTRAP)
        current = state(conn)  # another process may have migrated while we waited for the lock
        _refuse_changed(current)
        for m in current.pending:
            with conn.transaction():
                conn.execute(m.sql.encode())
                conn.execute("INSERT INTO carnet.schema_migrations (version, name, checksum) VALUES (%s, %s, %s)",
                             (m.version, m.name, m.checksum))
        return list(current.pending)
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))


def require_current(conn: Connection) -> None:
    """With automatic migration off: refuse to start on a schema that is behind this Carnet."""
    current = state(conn)
    _refuse_changed(current)
    if current.pending:
        versions = ", ".join(f"{m.version:04d}_{m.name}" for m in current.pending)
        raise DependencyUnavailable(f"the PostgreSQL control plane needs migrations {versions}: "
                                    "run `carnet db migrate`")


def _refuse_changed(current: SchemaState) -> None:
    if current.changed:
        raise DependencyUnavailable(
            f"PostgreSQL control plane: migration(s) {list(current.changed)} were changed after they were "
            "applied; the schema is not what this Carnet expects")


@contextmanager
def connected(conninfo: str) -> Iterator[Connection]:
    """One autocommit connection for ``carnet db``'s commands (the migration runs its own transactions),
    its failures raised as ``DependencyUnavailable`` (e.g. a migration the role may not apply)."""
    import psycopg

    try:
        conn = psycopg.connect(conninfo, autocommit=True)
    except psycopg.Error as exc:
        raise DependencyUnavailable(f"PostgreSQL control plane unreachable: {exc}") from exc
    with conn:
        try:
            yield conn
        except psycopg.Error as exc:
            raise DependencyUnavailable(f"PostgreSQL control plane: {exc}") from exc
