"""Running the app on a real socket inside this process (demo, benchmarks, end-to-end tests)."""

from __future__ import annotations

import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import httpx
import uvicorn
from fastapi import FastAPI

from carnet.entrypoints.http.protocol import uvicorn_options
from carnet.settings.api import ApiSettings


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def wait_ready(base_url: str, *, timeout: float = 30.0, alive: Callable[[], bool] = lambda: True,
               verify: ssl.SSLContext | bool = True) -> None:
    """Poll ``/healthz`` until it answers or the deadline passes (no fixed sleeps); ``alive`` says
    whether the server can still come up (a dead thread or process fails fast); ``verify``: for https,
    the client's TLS context (CA, and client certificate under mutual TLS)."""
    deadline = time.monotonic() + timeout
    while True:
        if not alive():
            raise RuntimeError(f"server at {base_url} stopped before it was ready")
        try:
            if httpx.get(f"{base_url}/healthz", timeout=1.0, verify=verify).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"server at {base_url} not ready after {timeout}s")
        time.sleep(0.05)


@contextmanager
def running(app: FastAPI, *, host: str = "127.0.0.1", port: int | None = None) -> Iterator[str]:
    """Serve ``app`` in a background thread, with its lifespan (``/mcp`` needs it); yields the base URL;
    stops the server on exit. The protocol is ``carnet serve``'s (``carnet.entrypoints.http.protocol``),
    with the limits of the app's settings."""
    port = port or free_port(host)
    container = getattr(app.state, "container", None)
    api = container.settings.api if container is not None else ApiSettings()
    config = uvicorn.Config(app, host=host, port=port, access_log=False, log_config=None, lifespan="on",
                            proxy_headers=False,  # client addresses: carnet.entrypoints.http.client_address
                            **uvicorn_options(api))
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="carnet-http", daemon=True)
    thread.start()
    base = f"http://{host}:{port}"
    try:
        wait_ready(base, alive=thread.is_alive)
        yield base
    finally:
        server.should_exit = True
        thread.join(timeout=10)
