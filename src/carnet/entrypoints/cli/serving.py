"""``carnet serve``: the API server (REST, MCP over HTTP, the console) on one port, with the scheduler and,
on the embedded store, the intake workers in the same process."""

from __future__ import annotations

import gc
from typing import Annotated

import typer

from carnet.entrypoints.cli.common import DataDir, configure_logs, settings_for


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)


def serve(
    data_dir: DataDir = None,
    host: Annotated[str | None, typer.Option(help="Interface to listen on (default 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option(min=1, max=65535, help="Port (default 8080).")] = None,
    demo: Annotated[bool, typer.Option("--demo", help=(
        "Serve the demo's own store (./carnet-demo unless --data-dir; never CARNET_DATA_DIR), seeded with the "
        "demo story and key the first time."))] = False,
) -> None:
    """Run the API server on embedded defaults. It owns the vector store while it runs."""
    import uvicorn

    from carnet.bootstrap.ops import build_scheduler
    from carnet.bootstrap.wiring import build, start_workers
    from carnet.entrypoints.http.app import create_app
    from carnet.entrypoints.http.protocol import uvicorn_options
    from carnet.entrypoints.http.tls import uvicorn_tls_options
    from carnet.errors import CarnetError

    settings = settings_for(data_dir, host=host, port=port).serving_defaults()
    if demo:  # its own store (./carnet-demo unless --data-dir), seeded once; never the real data dir
        from carnet.entrypoints.cli.demo import demo_settings

        settings = demo_settings(settings, data_dir)
    configure_logs(settings)
    if demo and settings.tls.enabled:
        typer.echo("error: --demo talks plain http to the server; run it without CARNET_TLS__CERT_FILE", err=True)
        raise typer.Exit(2)
    try:
        container = build(settings)
    except CarnetError as exc:
        typer.echo(f"error: {exc.message}", err=True)
        raise typer.Exit(2) from exc
    application = create_app(container)
    # Everything built so far lives as long as the process: move it out of the collector's way so
    # collections during requests stay short (they show in assemble's p99 otherwise).
    gc.collect()
    gc.freeze()
    if demo:
        from carnet.entrypoints.cli.demo import run_against_server_when_ready

        run_against_server_when_ready(container, settings)
    scheduler = build_scheduler(container)  # retention, decay (and backups) in-process: embedded store only
    scheduler.start()
    if settings.workers.in_process:  # intakes: the embedded shard has one owner, so its workers live here
        start_workers(container)
    try:
        # proxy_headers=False: the client's address is the peer's, or what CARNET_API__TRUSTED_PROXIES
        # allow X-Forwarded-For to say (carnet.entrypoints.http.client_address), never uvicorn's own default trust.
        # uvicorn_options: request heads bounded (431) and parser refusals in JSON (carnet.entrypoints.http.protocol).
        uvicorn.run(application, host=settings.host, port=settings.port, access_log=False, log_config=None,
                    proxy_headers=False, **uvicorn_tls_options(settings.tls),  # CARNET_TLS__*: https
                    **uvicorn_options(settings.api))
    finally:
        scheduler.stop()
        container.close()
