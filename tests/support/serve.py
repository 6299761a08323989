"""``carnet serve`` as a real subprocess, for the crash tests (kill -9 needs a process of its own)."""

from __future__ import annotations

import os
import ssl
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from carnet.bench import served
from carnet.bench.served import PORT_ATTEMPTS, listening
from carnet.entrypoints.http.server import free_port, wait_ready

# Admission's deadline for the tests' servers (in process and ``serve_process``): the default (500 ms)
# measures the machine, and a request waiting that long for a thread under the suite's load (three
# workers and their subprocesses on two cores) was refused with 503 ``overloaded`` where a test expected
# its 400. The tests of admission itself set their own (tests/e2e/test_admission.py, tests/unit/test_admission.py).
TEST_REQUEST_DEADLINE_MS = 60_000


@contextmanager
def serve_process(root: Path, env: dict[str, str], *, log_name: str = "serve.log",
                  tls: ssl.SSLContext | None = None) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """With ``tls`` (the client's context: CA, and client certificate under mutual TLS), the server
    is expected on https (``env`` carries its ``CARNET_TLS__*``) and readiness is polled with it."""
    full_env = {**os.environ, "CARNET_KEY_DIR": str(root / "keys"), "CARNET_MAINTENANCE__SCHEDULER": "false",
                # admission's deadline: not the machine's load under the suite (above)
                "CARNET_API__REQUEST_DEADLINE_MS": str(TEST_REQUEST_DEADLINE_MS), **env}
    for attempt in range(1, PORT_ATTEMPTS + 1):  # the free port taken by another process first: another port
        port = free_port()
        cmd = [sys.executable, "-m", "carnet", "serve", "--data-dir", str(root / "data"), "--port", str(port)]
        with (root / log_name).open("wb") as log:
            proc = subprocess.Popen(cmd, env=full_env, stdout=subprocess.DEVNULL, stderr=log)
            base = f"{'https' if tls is not None else 'http'}://127.0.0.1:{port}"
            try:
                try:
                    wait_ready(base, timeout=120, alive=lambda p=proc: p.poll() is None,  # type: ignore[misc]
                               verify=tls if tls is not None else True)
                except RuntimeError:
                    said = (root / log_name).read_text(errors="replace").lower()
                    if attempt < PORT_ATTEMPTS and "address already in use" in said:
                        continue
                    raise
                if attempt < PORT_ATTEMPTS and not listening(port, proc.pid):
                    continue  # another server answered on that port (bench.served.listening)
                yield base, proc
                return
            finally:
                stop(proc)


def stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL if the process has not ended within 30 s."""
    served.stop(proc, timeout=30)
