"""``carnet backup …``: archives of the embedded store, their restore, and the erasure ledger replay.

Progress goes to stderr, a JSON summary to stdout; an error ends the command with exit code 2.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer

from carnet.services.audit import SYSTEM_CHAIN
from carnet.settings.root import Settings

backup_app = typer.Typer(help="Backups of the embedded store (vector shard and catalog; never keys), and restore.",
                         no_args_is_help=True)

DataDir = Annotated[Path | None, typer.Option("--data-dir", help="Data directory (default ./carnet-data).")]
BackupDir = Annotated[Path | None, typer.Option("--dir", help="Backup directory (default <data dir>-backups).")]


def register(app: typer.Typer) -> None:
    app.add_typer(backup_app, name="backup")


def _progress(message: str) -> None:
    typer.echo(message, err=True)


@backup_app.command("create")
def create(
    data_dir: DataDir = None,
    output: Annotated[Path | None, typer.Option(
        help="Archive to write (.tar.gz or .tar), or a directory to name it in (default <data dir>-backups).")] = None,
    compress: Annotated[bool, typer.Option("--compress/--no-compress", help="gzip the archive.")] = True,
    url: Annotated[str | None, typer.Option(
        help="Ask the server at this address to back itself up (default CARNET_URL; with only CARNET_API_KEY "
             "set, the address CARNET_HOST/CARNET_PORT serve on). The key comes from CARNET_API_KEY.")] = None,
) -> None:
    """Archive the vector shard and the catalog into one checksummed file. On a stopped store, from its
    files; while `carnet serve` holds it (or with --url), the server writes the archive into its own
    backup dir (POST /api/v1/admin/backup, an admin key in CARNET_API_KEY)."""
    from carnet.bootstrap.ops import backup_source, store_held
    from carnet.bootstrap.wiring import build
    from carnet.entrypoints.cli.common import audited, configure_logs, reported, settings_for
    from carnet.errors import StoreLocked
    from carnet.services.backup.snapshots import create_backup

    settings = settings_for(data_dir)
    configure_logs(settings)
    if url is not None or store_held(settings):
        _through_server(settings, url, local_options=output is not None or not compress)
        return
    with reported():
        try:
            container = build(settings)
        except StoreLocked:  # a server started meanwhile
            _through_server(settings, url, local_options=output is not None or not compress)
            return
        try:
            with audited(settings, SYSTEM_CHAIN, "backup.create"):
                report = create_backup(source=backup_source(container),
                                       output=output or settings.resolved_backup_dir, compress=compress,
                                       progress=_progress)
        finally:
            container.close()
    typer.echo(json.dumps(report.as_dict()))


def _through_server(settings: Settings, url: str | None, *, local_options: bool) -> None:
    """The running server backs up its own store (it holds it): ask it, with the key of CARNET_API_KEY."""
    from carnet.entrypoints.cli.remote import KEY_ENV, URL_ENV, post, server_url

    base = server_url(settings, url)
    if base is None:
        typer.echo(f"error: the store at {settings.data_dir} is held by another process (`carnet serve`?). To have the "
                   f"server back up now, "
                   f"set {KEY_ENV} to an admin key and give its address (--url or {URL_ENV}); "
                   "or stop it first. It also backs itself up daily (CARNET_MAINTENANCE__BACKUP_INTERVAL_HOURS).",
                   err=True)
        raise typer.Exit(2)
    if local_options:
        typer.echo("note: --output and --no-compress apply to a stopped store; the server writes into its "
                   "own backup dir", err=True)
    _progress(f"backup: asking the server at {base}")
    report = post(base, "/api/v1/admin/backup")
    _progress(f"backup: {report.get('file')} written by the server into its backup dir")
    typer.echo(json.dumps(report))


@backup_app.command("restore")
def restore(
    archive: Annotated[Path, typer.Argument(help="The backup archive.")],
    data_dir: DataDir = None,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")] = False,
) -> None:
    """Replace the data dir's stores with the backup's, then erase again every subject the erasure
    ledger records since the backup. Offline: refuses while `carnet serve` holds the store. The
    replaced stores are moved aside inside the data dir (printed); delete them once checked."""
    from carnet.bootstrap.ops import restore_target
    from carnet.entrypoints.cli.common import audited, configure_logs, reported, settings_for
    from carnet.services.backup.archive import read_manifest
    from carnet.services.backup.restore import restore_backup

    settings = settings_for(data_dir)
    configure_logs(settings)
    with reported():
        if not yes:
            manifest = read_manifest(archive)
            typer.echo(f"restore {archive} (taken {manifest.created_at.isoformat()}, {manifest.records} records) "
                       f"into {settings.data_dir}; the current stores are moved aside", err=True)
            if not sys.stdin.isatty():
                typer.echo("refused: not a terminal; add --yes to confirm", err=True)
                raise typer.Exit(2)
            if not typer.confirm("continue?", err=True):
                typer.echo("restore cancelled", err=True)
                raise typer.Exit(2)
        with audited(settings, SYSTEM_CHAIN, "backup.restore"):
            report = restore_backup(archive=archive, target=restore_target(settings), progress=_progress)
    typer.echo(json.dumps(report.as_dict()))


@backup_app.command("list")
def list_(data_dir: DataDir = None, directory: BackupDir = None) -> None:
    """The archives in the backup directory, oldest first, as a JSON array (from their manifests)."""
    from carnet.entrypoints.cli.common import settings_for
    from carnet.services.backup.snapshots import list_backups

    settings = settings_for(data_dir)
    found = list_backups(directory=directory or settings.resolved_backup_dir)
    typer.echo(json.dumps([b.as_dict() for b in found]))


@backup_app.command("prune")
def prune(
    keep: Annotated[int, typer.Option(min=1, max=100_000, help="How many of the newest backups to keep.")],
    data_dir: DataDir = None,
    directory: BackupDir = None,
) -> None:
    """Delete all but the newest backups. Until pruned, a backup keeps erased subjects' sealed records
    (unreadable: their keys are destroyed), so keep no more than your erasure policy allows."""
    from carnet.entrypoints.cli.common import reported, settings_for
    from carnet.services.backup.snapshots import prune_backups

    settings = settings_for(data_dir)
    with reported():
        deleted = prune_backups(directory=directory or settings.resolved_backup_dir, keep=keep)
    typer.echo(json.dumps({"deleted": [str(p) for p in deleted]}))


@backup_app.command("reapply-erasures")
def reapply(
    since: Annotated[str, typer.Option(help="When the restored snapshot was taken, ISO 8601 with a time zone.")],
    data_dir: DataDir = None,
) -> None:
    """After restoring a Qdrant snapshot and a catalog dump by hand (docs/backup.md): erase again every
    subject the ledger records from SINCE on. Run it before opening traffic."""
    from carnet.bootstrap.ops import records_index
    from carnet.bootstrap.wiring import build
    from carnet.entrypoints.cli.common import configure_logs, reported, settings_for
    from carnet.services.rights.reerase import reapply_erasures

    at = _aware(since)
    settings = settings_for(data_dir)
    configure_logs(settings)
    with reported():
        container = build(settings)
        try:
            d = container.deps
            with container.audit.recorded(container.audit.event(tenant=SYSTEM_CHAIN, actor="cli:backup",
                                                                action="backup.reapply_erasures")):
                report = reapply_erasures(ledger=d.ledger, index=records_index(container), catalog=d.catalog,
                                          keys=d.keys, intakes=d.intakes, since=at,
                                          procedures=container.facade.procedures)
        finally:
            container.close()
    typer.echo(json.dumps(report.as_dict()))
    if not report.verified:
        raise typer.Exit(1)


def _aware(text: str) -> datetime:
    """The domain's datetime rule (``carnet.domain.reconcile.values``), said the CLI's way."""
    from carnet.domain.reconcile.values import RANGE_TEXT, parse_instant

    try:
        return parse_instant(text)
    except ValueError:
        typer.echo(f"error: --since must be ISO 8601 with a time zone, {RANGE_TEXT}, e.g. 2026-05-01T02:00:00Z",
                   err=True)
        raise typer.Exit(2) from None
