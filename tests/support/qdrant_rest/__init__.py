"""The Qdrant test server in a thread of the test process, on a free port, its shards in a temporary
directory removed afterwards. The server itself (what it reproduces, and what not) is
``carnet.bench.topology.qdrant_rest``."""

from __future__ import annotations

import ssl
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import uvicorn

from carnet.bench.topology.qdrant_rest.app import QdrantRestApp
from carnet.bench.topology.qdrant_rest.store import Store
from carnet.entrypoints.http.server import free_port
from tests.support.tls import MtlsFiles, TlsFiles


@dataclass(frozen=True)
class RunningQdrant:
    url: str
    app: QdrantRestApp
    api_key: str | None
    ca_cert: Path | None


@contextmanager
def serving(*, api_key: str | None = None, tls: TlsFiles | None = None,
            mtls: MtlsFiles | None = None) -> Iterator[RunningQdrant]:
    """Serve a Qdrant test server on a free port in a background thread, its shards in a temporary
    directory removed afterwards. ``mtls``: HTTPS from its server files, client certificates required."""
    tls = mtls.server if mtls is not None else tls
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="qdrant-rest-") as root:
        store = Store(Path(root))
        app = QdrantRestApp(store)
        config = uvicorn.Config(app.asgi(api_key=api_key), host="127.0.0.1", port=port, access_log=False,
                                log_config=None, lifespan="off", timeout_graceful_shutdown=1,
                                ssl_certfile=str(tls.cert) if tls else None, ssl_keyfile=str(tls.key) if tls else None,
                                ssl_ca_certs=str(mtls.server.ca_cert) if mtls else None,
                                ssl_cert_reqs=ssl.CERT_REQUIRED if mtls else ssl.CERT_NONE)
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, name="qdrant-test-server", daemon=True)
        thread.start()
        url = f"{'https' if tls else 'http'}://127.0.0.1:{port}"
        try:
            verify: ssl.SSLContext | bool = ssl.create_default_context(cafile=str(tls.ca_cert)) if tls else True
            if mtls is not None and isinstance(verify, ssl.SSLContext):
                verify.load_cert_chain(mtls.client_cert, mtls.client_key)
            _wait_ready(url, thread, verify=verify)
            yield RunningQdrant(url, app, api_key, tls.ca_cert if tls else None)
        finally:
            server.should_exit = True
            thread.join(timeout=10)
            store.close()


def _wait_ready(url: str, thread: threading.Thread, *, verify: ssl.SSLContext | bool, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not thread.is_alive():
            raise RuntimeError("the Qdrant test server stopped before it was ready")
        try:
            if httpx.get(f"{url}/healthz", timeout=1.0, verify=verify).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.02)  # poll interval, not a wait for readiness
    raise TimeoutError(f"the Qdrant test server at {url} was not ready after {timeout}s")
