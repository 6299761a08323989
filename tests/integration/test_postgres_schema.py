"""The PostgreSQL control plane's schema: migrations applied once however many processes start at
once, changed migrations refused, `carnet db migrate|status`, and the audit trail append-only in
the database and tamper-evident through `carnet audit verify`."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
from typer.testing import CliRunner

from carnet.adapters.postgres import migrate as migrations
from carnet.adapters.postgres.audit import PostgresAuditLog
from carnet.adapters.postgres.pool import open_pool
from carnet.domain.audit import AuditEvent
from carnet.entrypoints.cli.main import app
from carnet.errors import DependencyUnavailable
from tests.support.postgres import open_test_pool

runner = CliRunner()
Conn = psycopg.Connection[tuple[Any, ...]]


def _env(dsn: str) -> dict[str, str]:
    return {"CARNET_CATALOG": "postgres", "CARNET_POSTGRES__DSN": dsn}


@pytest.fixture
def conn(postgres_dsn: str) -> Iterator[Conn]:
    with psycopg.connect(postgres_dsn, autocommit=True) as c:
        yield c


def test_processes_starting_at_once_apply_each_migration_once(postgres_dsn: str, conn: Conn) -> None:
    applied: list[int] = []
    errors: list[BaseException] = []
    start = threading.Barrier(6)

    def boot() -> None:
        try:
            with psycopg.connect(postgres_dsn, autocommit=True) as own:
                start.wait()
                applied.extend(m.version for m in migrations.migrate(own))
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=boot) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == [] and applied == [m.version for m in migrations.shipped()]
    state = migrations.state(conn)
    assert state.current and [a.version for a in state.applied] == applied
    assert state.applied[0].checksum == migrations.shipped()[0].checksum
    assert migrations.migrate(conn) == []


def test_a_changed_migration_is_refused_and_a_newer_one_tolerated(postgres_dsn: str, conn: Conn) -> None:
    migrations.migrate(conn)
    conn.execute("INSERT INTO carnet.schema_migrations (version, name, checksum) VALUES (999, 'future', 'x')")
    open_test_pool(postgres_dsn).close()  # a newer Carnet migrated: this one still starts
    assert migrations.state(conn).unknown == (999,)
    conn.execute("UPDATE carnet.schema_migrations SET checksum = 'edited' WHERE version = 1")
    with pytest.raises(DependencyUnavailable, match="changed after they were applied"):
        open_test_pool(postgres_dsn)


def test_without_auto_migration_start_refuses_until_db_migrate(postgres_dsn: str) -> None:
    with pytest.raises(DependencyUnavailable, match="carnet db migrate"):
        open_pool(postgres_dsn, size=1, timeout=5, migrate=False, name="test")
    status = runner.invoke(app, ["db", "status"], env=_env(postgres_dsn))
    assert status.exit_code == 1 and '"state": "pending"' in status.output, status.output
    done = runner.invoke(app, ["db", "migrate"], env=_env(postgres_dsn))
    assert done.exit_code == 0 and "applied 0001_initial" in done.output, done.output
    again = runner.invoke(app, ["db", "migrate"], env=_env(postgres_dsn))
    assert "nothing to apply" in again.output
    status = runner.invoke(app, ["db", "status"], env=_env(postgres_dsn))
    assert status.exit_code == 0 and '"state": "applied"' in status.output
    open_pool(postgres_dsn, size=1, timeout=5, migrate=False, name="test").close()


def test_db_commands_need_the_postgres_catalog() -> None:
    result = runner.invoke(app, ["db", "status"], env={"CARNET_CATALOG": "sqlite"})
    assert result.exit_code == 2 and "not postgres" in result.output


def _trail(dsn: str) -> None:
    log = PostgresAuditLog(open_test_pool(dsn))
    log.append([AuditEvent(tenant="t1", actor="k1", action="memory.write", at=datetime.now(UTC), subject=f"h{n}",
                           detail={"count": n}) for n in range(4)])
    log.close()


@pytest.mark.parametrize("change", ["UPDATE carnet_audit.entries SET actor = 'intruder' WHERE seq = 2",
                                    "DELETE FROM carnet_audit.entries WHERE seq = 4",
                                    "TRUNCATE carnet_audit.entries"])
def test_the_audit_trail_is_append_only_in_the_database(postgres_dsn: str, conn: Conn,
                                                        change: str) -> None:
    _trail(postgres_dsn)
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
        conn.execute(change.encode())
    assert runner.invoke(app, ["audit", "verify"], env=_env(postgres_dsn)).exit_code == 0


def test_verify_names_an_entry_altered_behind_the_trigger(postgres_dsn: str, conn: Conn) -> None:
    """A superuser can drop the trigger; the hash chain still names what was changed."""
    _trail(postgres_dsn)
    conn.execute("ALTER TABLE carnet_audit.entries DISABLE TRIGGER entries_append_only")
    conn.execute("UPDATE carnet_audit.entries SET actor = 'intruder' WHERE tenant = 't1' AND seq = 3")
    result = runner.invoke(app, ["audit", "verify"], env=_env(postgres_dsn))
    assert result.exit_code == 1 and "tenant t1: entry 3 altered" in result.output, result.output
    exported = runner.invoke(app, ["audit", "export", "--tenant", "t1"], env=_env(postgres_dsn))
    assert exported.exit_code == 0 and exported.output.count('"tenant": "t1"') == 4
