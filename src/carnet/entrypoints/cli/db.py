"""``carnet db migrate`` and ``carnet db status``: the PostgreSQL control plane's schema.

Every process migrates at start by default (under an advisory lock); these commands are for
deployments that turn that off (``CARNET_POSTGRES__AUTO_MIGRATE=false``) and run migrations as a
step of their own, e.g. with a role that may change the schema while the service's role may not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

db_app = typer.Typer(help="The PostgreSQL control plane's schema (CARNET_CATALOG=postgres).", no_args_is_help=True)

DataDir = Annotated[Path | None, typer.Option("--data-dir", help="Data directory (default ./carnet-data).")]


def register(app: typer.Typer) -> None:
    app.add_typer(db_app, name="db")


@db_app.command("migrate")
def migrate(data_dir: DataDir = None) -> None:
    """Apply the pending migrations (under an advisory lock: safe while other processes start)."""
    from carnet.bootstrap.offline import migrate_schema
    from carnet.entrypoints.cli.common import reported, settings_for

    with reported():
        applied, current = migrate_schema(settings_for(data_dir))
    for m in applied:
        typer.echo(f"applied {m.version:04d}_{m.name}")
    version = max((a.version for a in current.applied), default=0)
    typer.echo(f"schema at version {version}" + ("" if applied else " (nothing to apply)"))


@db_app.command("status")
def status(data_dir: DataDir = None) -> None:
    """One JSON line per migration (version, name, state: applied, pending, changed or unknown, and
    when it was applied). Exit code 1 when a migration is pending or was changed after it was applied."""
    from carnet.bootstrap.offline import schema_state
    from carnet.entrypoints.cli.common import reported, settings_for

    with reported():
        current = schema_state(settings_for(data_dir))
    for a in current.applied:
        state = "changed" if a.version in current.changed else "unknown" if a.version in current.unknown else "applied"
        typer.echo(json.dumps({"version": a.version, "name": a.name, "state": state,
                               "applied_at": a.applied_at.isoformat()}))
    for m in current.pending:
        typer.echo(json.dumps({"version": m.version, "name": m.name, "state": "pending",
                               "applied_at": None}))
    if not current.current:
        raise typer.Exit(1)
