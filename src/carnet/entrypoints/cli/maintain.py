"""``carnet maintain`` and ``carnet reembed``: forgetting on schedule, and changing embedding models.

Both work on the files of the store: they refuse while ``carnet serve`` holds the embedded shard
(a running server maintains itself with its scheduler, or through ``POST /api/v1/admin/maintain``).
Progress goes to stderr; the result to stdout (JSON with ``--json``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from carnet.settings.root import EmbedderKind

if TYPE_CHECKING:
    from carnet.bootstrap.container import Container
    from carnet.ports import Embedder
    from carnet.services.lifecycle.maintain import MaintainReport
    from carnet.settings.root import Settings

DataDir = Annotated[Path | None, typer.Option("--data-dir", help="Data directory (default ./carnet-data).")]


def register(app: typer.Typer) -> None:
    app.command("maintain")(maintain_command)
    app.command("reembed")(reembed_command)


def _progress(verb: str) -> Callable[[str, int, int], None]:
    def say(tenant: str, done: int, total: int) -> None:
        if done == total or done % max(1, total // 20) == 0:
            typer.echo(f"{verb} {tenant}: {done}/{total} subjects", err=True)

    return say


def _open(settings: Settings, *, offline_hint: str, embedder: Embedder | None = None) -> Container:
    from carnet.bootstrap.wiring import build
    from carnet.errors import StoreLocked

    try:
        return build(settings, embedder=embedder)
    except StoreLocked as exc:
        typer.echo(f"error: {exc.message}. {offline_hint}", err=True)
        raise typer.Exit(2) from exc


def maintain_command(
    data_dir: DataDir = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Report what would be deleted; change nothing.")] = False,
    compact: Annotated[bool, typer.Option("--compact/--no-compact",
                                          help="Vacuum deleted points from the store's files afterwards.")] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Apply retention, relationship-end expiry and decay to every subject of every tenant (legal
    holds respected), deleting records physically with a metadata-only history entry each, then
    compact the store. Says what it removed, per tenant and reason (no subject, no text)."""
    from carnet.entrypoints.cli.common import configure_logs, reported, settings_for
    from carnet.services.audit import SYSTEM_CHAIN
    from carnet.services.door import operator

    settings = settings_for(data_dir)
    configure_logs(settings)
    with reported():
        container = _open(settings, offline_hint="A running server maintains itself (its scheduler, or "
                                                 "POST /api/v1/admin/maintain); or stop it first.")
        try:
            report = container.facade.maintain_store(operator(SYSTEM_CHAIN, "cli:maintain", "admin"),
                                                     dry_run=dry_run, compact=compact, progress=_progress("maintain"))
        finally:
            container.close()
    typer.echo(json.dumps(report.as_dict(), indent=2) if as_json else _summary(report))


def _summary(report: MaintainReport) -> str:
    verb = "would delete" if report.dry_run else "deleted"
    totals = report.totals()
    lines = [f"maintain: {verb} {sum(totals.values())} record(s)"
             + (f" ({', '.join(f'{r} {n}' for r, n in totals.items())})" if totals else "")
             + (", store compacted" if report.compacted else "")]
    for name, t in sorted(report.tenants.items()):
        detail = ", ".join(f"{r} {n}" for r, n in sorted(t.deleted.items())) or "nothing"
        lines.append(f"  {name}: {t.subjects} subject(s), {t.held} on legal hold, {t.failed} failed; {detail}")
    return "\n".join(lines)


def reembed_command(
    embedder: Annotated[EmbedderKind, typer.Option("--embedder", "--model", help="The new embedding model.")],
    embedder_path: Annotated[Path | None, typer.Option(
        help="Local directory of a sentence-transformers model (--embedder sentence-transformers).")] = None,
    query_prefix: Annotated[str, typer.Option(help="Query prefix of the new model (e.g. 'query: ').")] = "",
    passage_prefix: Annotated[str, typer.Option(help="Passage prefix of the new model.")] = "",
    keep_old: Annotated[bool, typer.Option("--keep-old", help="Keep the previous shard (vectors.old-<time>).")] = False,
    collection: Annotated[str | None, typer.Option(
        help="Qdrant server backend: the new collection to build.")] = None,
    data_dir: DataDir = None,
) -> None:
    """Migrate every memory to a new embedding model: build a new store from the decrypted texts
    (pseudonymised text only is embedded), then switch to it. Offline. Until the switch the current
    store stays live; an interrupted run leaves it untouched and is started over by the next run.
    Afterwards set CARNET_EMBEDDER (and its path and prefixes) to the new model: a start with the
    old one is refused. Prints a JSON report."""
    from carnet.bootstrap.models import build_embedder
    from carnet.bootstrap.offline import reembed_edge, reembed_server
    from carnet.entrypoints.cli.common import configure_logs, reported, settings_for
    from carnet.errors import StoreLocked
    from carnet.settings.root import VectorBackend

    settings = settings_for(data_dir)
    configure_logs(settings)
    target = settings.model_copy(update={"embedder": embedder, "embedder_path": embedder_path,
                                         "embedder_query_prefix": query_prefix,
                                         "embedder_passage_prefix": passage_prefix})
    with reported():
        new = build_embedder(target)
        try:
            if settings.vector_backend is VectorBackend.EDGE:
                result = reembed_edge(settings, new, keep_old=keep_old, progress=_progress("reembed"))
            else:
                result = reembed_server(settings, target, new, collection, progress=_progress("reembed"))
        except StoreLocked as exc:
            typer.echo(f"error: {exc.message}. Stop the server first: a reembed runs offline.", err=True)
            raise typer.Exit(2) from exc
    typer.echo(json.dumps(result, indent=2))
    wanted = {"CARNET_EMBEDDER": embedder.value, "CARNET_EMBEDDER_PATH": embedder_path,
              "CARNET_EMBEDDER_QUERY_PREFIX": query_prefix or None,
              "CARNET_EMBEDDER_PASSAGE_PREFIX": passage_prefix or None}
    typer.echo("next: start with " + " ".join(f"{k}={v!s}" for k, v in wanted.items() if v is not None)
               + "; reconcile thresholds are calibrated per model (python -m carnet.bench.calibrate)", err=True)
