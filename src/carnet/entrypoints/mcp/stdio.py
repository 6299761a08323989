"""MCP over stdio: the client starts ``carnet mcp`` and talks to it on stdin/stdout.

The key comes from ``CARNET_API_KEY`` (never from argv, which ``ps`` shows every user) and is checked
before anything else is built, so a bad one is refused in a second with a message on stderr. The
process then builds its own container: in embedded mode it owns the shard, so it cannot run beside
``carnet serve`` on the same data dir (``StoreLocked``); clients of a running server use its ``/mcp``
endpoint over HTTP instead.

stdout carries the protocol and nothing else: logs go to stderr (``carnet.logs``), anything printed
while the container is built is sent to stderr, and while serving the SDK points file descriptor 1
at stderr and writes the protocol through a private duplicate.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

import anyio
import structlog
from mcp.server import Server
from mcp.server.stdio import stdio_server

from carnet.bootstrap.stores import build_control_plane
from carnet.bootstrap.wiring import build
from carnet.entrypoints.mcp.auth import with_key
from carnet.entrypoints.mcp.server import build_server
from carnet.errors import Unauthenticated
from carnet.services.apikeys import Principal, authenticate
from carnet.settings.root import Settings

log = structlog.get_logger("carnet.entrypoints.mcp")

KEY_ENV = "CARNET_API_KEY"


def check_key(settings: Settings, key: str) -> Principal:
    """The key's principal, from the catalog alone (the shard is not opened), or ``Unauthenticated``."""
    plane = build_control_plane(settings)
    try:
        return authenticate(plane.catalog, plane.pepper, key)
    finally:
        plane.catalog.close()


def serve_stdio(settings: Settings, key: str | None) -> None:
    """Check the key, then serve until the client closes stdin. Raises ``Unauthenticated`` for a
    missing or bad key, ``StoreLocked`` if another process owns the store."""
    if not key:
        raise Unauthenticated(f"set {KEY_ENV} to an API key (`carnet apikey create`); it is never read from "
                              "the command line, which other users can see")
    who = check_key(settings, key)
    with contextlib.redirect_stdout(sys.stderr):
        container = build(settings)
    try:
        server = build_server(container.facade, principal=with_key(container, key))
        log.info("mcp_stdio_ready", key_id=who.key_id)
        anyio.run(_serve, server, container.close)
    finally:
        container.close()  # flushes the queued audit entries and access statistics
    log.info("mcp_stdio_stopped", key_id=who.key_id)


async def _serve(server: Server[Any], close: Callable[[], None]) -> None:
    """Until the client closes stdin (how MCP clients stop a server), or sends SIGTERM."""
    async with anyio.create_task_group() as tg:
        tg.start_soon(_exit_on_sigterm, close)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
        tg.cancel_scope.cancel()


async def _exit_on_sigterm(close: Callable[[], None]) -> None:
    """Cancelling the server would wait for the SDK's stdin reader, a worker thread blocked in a read
    that only EOF ends; so a SIGTERM closes the container (the audit queue is flushed, nothing is lost
    but the calls in flight) and ends the process there."""
    with anyio.open_signal_receiver(signal.SIGTERM) as signals:
        async for _ in signals:
            try:
                close()
                log.info("mcp_stdio_stopped", reason="sigterm")
            finally:
                os._exit(0)
