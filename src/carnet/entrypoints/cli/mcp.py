"""``carnet mcp``: the memory tools for an MCP client (Claude Desktop, an agent framework...)."""

from __future__ import annotations

import inspect
import os
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand


class Transport(StrEnum):
    STDIO = "stdio"
    HTTP = "http"


class _ToolsNamed(TyperCommand):
    """``carnet mcp --help`` names the tools from the registry the server serves (``tools.TOOLS``), read
    when the help is asked for: every other command starts without importing the tools."""

    def format_help(self, ctx: Any, formatter: Any) -> None:  # typer's own click types, not public
        from carnet.entrypoints.mcp.tools import TOOLS

        self.help = f"{_DOC}\n\nThe {len(TOOLS)} tools served: {', '.join(TOOLS)}."
        super().format_help(ctx, formatter)


def register(app: typer.Typer) -> None:
    app.command("mcp", cls=_ToolsNamed)(mcp)


def mcp(
    data_dir: Annotated[Path | None, typer.Option("--data-dir", help="Data directory (default ./carnet-data).")] = None,
    transport: Annotated[Transport, typer.Option(help="stdio: the client starts this command; http: serve "
                                                      "/mcp (and the REST API) on a port.")] = Transport.STDIO,
    host: Annotated[str | None, typer.Option(help="http: interface to listen on (default 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option(min=1, max=65535, help="http: port (default 8080).")] = None,
) -> None:
    """Serve Carnet's MCP tools (this help names them) with the REST API's roles and audit.

    stdio: the API key is read from CARNET_API_KEY (never from the command line, which `ps` shows);
    this process owns the data dir, so it cannot run beside `carnet serve` on the same one: with a
    server running, point the client at its /mcp endpoint instead. http: the same server as
    `carnet serve` (REST and MCP on one port); each request carries `Authorization: Bearer <key>`.
    """
    if transport is Transport.HTTP:
        from carnet.entrypoints.cli.serving import serve

        serve(data_dir=data_dir, host=host, port=port, demo=False)
        return
    _stdio(data_dir)


def _stdio(data_dir: Path | None) -> None:
    from carnet.entrypoints.mcp.stdio import KEY_ENV, serve_stdio
    from carnet.errors import CarnetError, StoreLocked
    from carnet.logs import configure
    from carnet.settings.root import Settings

    # The client's credential, not a server setting: taken out of the environment before the settings
    # (which refuse unknown CARNET_* variables) are read, and so that no child process inherits it.
    key = os.environ.pop(KEY_ENV, None)
    settings = Settings(data_dir=data_dir) if data_dir is not None else Settings()
    configure(settings.log_level)  # to stderr: stdout is the protocol's
    try:
        serve_stdio(settings, key)
    except StoreLocked as exc:
        typer.echo(f"error: {exc.message}. `carnet mcp` over stdio opens the store itself; while `carnet serve` "
                   "runs on this data dir, connect the MCP client to its /mcp endpoint over HTTP instead.", err=True)
        raise typer.Exit(2) from exc
    except CarnetError as exc:
        typer.echo(f"error: {exc.message}", err=True)
        raise typer.Exit(2) from exc


_DOC = inspect.cleandoc(mcp.__doc__ or "")
