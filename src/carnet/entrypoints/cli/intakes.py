"""``carnet worker`` (intake workers as their own process) and ``carnet intakes …`` (the queue)."""

from __future__ import annotations

import json
import signal
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

intakes_app = typer.Typer(help="The intake queue: its state, and dead intakes sent back.", no_args_is_help=True)

DataDir = Annotated[Path | None, typer.Option("--data-dir", help="Data directory (default ./carnet-data).")]


def register(app: typer.Typer) -> None:
    app.command("worker")(worker)
    app.add_typer(intakes_app, name="intakes")


def worker(
    data_dir: DataDir = None,
    threads: Annotated[int | None, typer.Option(min=1, max=256,
                                                help="Worker threads (default CARNET_WORKERS__THREADS).")]
    = None,
) -> None:
    """Process intakes until SIGTERM or SIGINT, then finish the current ones and stop. Several
    `carnet worker` processes share a PostgreSQL queue and a Qdrant server; on the embedded store the
    server's own workers do this (the shard has one owner: this command refuses while it runs)."""
    from carnet.bootstrap.wiring import build, start_workers
    from carnet.entrypoints.cli.common import configure_logs, reported, settings_for
    from carnet.errors import StoreLocked
    from carnet.settings.root import WorkerSettings

    settings = settings_for(data_dir)
    if threads is not None:
        settings = settings.model_copy(update={"workers": WorkerSettings(**{**settings.workers.model_dump(),
                                                                            "threads": threads})})
    configure_logs(settings)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    with reported():
        try:
            container = build(settings)
        except StoreLocked as exc:
            typer.echo(f"error: {exc.message}. `carnet serve` processes intakes itself on the embedded store.",
                       err=True)
            raise typer.Exit(2) from exc
        try:
            start_workers(container, prefix="worker")
            typer.echo(f"worker: {settings.workers.threads} threads processing intakes", err=True)
            stop.wait()
            typer.echo("worker: stopping", err=True)
        finally:
            container.close()


@intakes_app.command("retry")
def retry(
    tenant: Annotated[str | None, typer.Option(help="Only this tenant's dead intakes.")] = None,
    intake: Annotated[str | None, typer.Option("--intake", help="Only this intake id.")] = None,
    data_dir: DataDir = None,
) -> None:
    """Send dead intakes back to pending with a fresh attempt count (after fixing what killed them:
    the LLM server, its model name…). Works while the server runs."""
    from carnet.bootstrap.stores import build_intake_store
    from carnet.bootstrap.wiring import build_audit
    from carnet.entrypoints.cli.common import configure_logs, reported, settings_for
    from carnet.services.audit import SYSTEM_CHAIN

    settings = settings_for(data_dir)
    configure_logs(settings)
    with reported():
        store = build_intake_store(settings)
        audit = build_audit(settings)
        try:
            event = audit.event(tenant=tenant or SYSTEM_CHAIN, actor="cli:intakes", action="intake.retry",
                                targets=(intake,) if intake else ())
            with audit.recorded(event):
                count = store.retry_dead(tenant=tenant, intake_id=intake, now=datetime.now(UTC))
        finally:
            audit.stop()
            audit.log.close()
            store.close()
    typer.echo(json.dumps({"requeued": count}))


@intakes_app.command("stats")
def stats(data_dir: DataDir = None) -> None:
    """Pending, processing and dead intakes, and the age of the oldest pending one, as JSON."""
    from carnet.bootstrap.stores import build_intake_store
    from carnet.entrypoints.cli.common import reported, settings_for

    settings = settings_for(data_dir)
    with reported():
        store = build_intake_store(settings)
        try:
            s = store.stats()
        finally:
            store.close()
    typer.echo(json.dumps({"pending": s.pending, "processing": s.processing, "dead": s.dead,
                           "oldest_pending_at": s.oldest_pending_at.isoformat() if s.oldest_pending_at else None}))
