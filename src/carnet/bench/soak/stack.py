"""The production topology on this machine, every part a process or server of its own, and the
faults the soak injects into it.

PostgreSQL (catalog, intake queue, audit, erasure ledger, subject locks, key invalidations), the
Qdrant test server in its own process (the vector store of every API and worker), an OpenBao dev
server (Transit as the KMS, KV for the wrapped data keys), ``apis`` ``carnet serve`` processes and
``workers`` ``carnet worker`` processes, each with the environment production gives it. Each fault
touches one part and leaves the others running (their pids are checked after).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

from carnet.bench.topology import TopologyError
from carnet.bench.topology.openbao import Bao, transit_server
from carnet.bench.topology.postgres import Cluster, bindir, free_port, server_user

_WORKER_READY = b"threads processing intakes"  # what `carnet worker` prints once its threads run
_READY_S = 600.0  # a process loads the embedder and PII models first: minutes on a loaded 2-core machine


def environment(root: Path, dsn: str, qdrant_url: str, collection: str, bao: Bao) -> dict[str, str]:
    """What each ``carnet`` process of the topology is given (the same for all, as one Deployment's pods)."""
    return {
        "CARNET_KEY_DIR": str(root / "keys"),  # the dev pepper and tenant secret, shared as a mounted secret
        "CARNET_CATALOG": "postgres", "CARNET_POSTGRES__DSN": dsn, "CARNET_POSTGRES__POOL_SIZE": "4",
        "CARNET_VECTOR_BACKEND": "server", "CARNET_QDRANT__URL": qdrant_url, "CARNET_QDRANT__COLLECTION": collection,
        "CARNET_KMS_BACKEND": "vault", "CARNET_KEY_STORE": "vault", "CARNET_VAULT__URL": bao.url,
        "CARNET_VAULT__AUTH": "token", "CARNET_VAULT__TOKEN": bao.root_token, "CARNET_VAULT__CA_CERT": str(bao.ca_cert),
        "CARNET_WORKERS__IN_PROCESS": "false", "CARNET_MAINTENANCE__SCHEDULER": "false", "CARNET_LOG_LEVEL": "WARNING",
    }


def create_keys(env: dict[str, str], data_dir: Path, wanted: Mapping[str, tuple[str, ...]]) -> dict[str, str]:
    """API keys ``{name: (tenant, role, ...)}`` created as `carnet apikey create` does, with the topology's
    settings (which also migrates the schemas once, before any process starts)."""
    from carnet.bootstrap.stores import build_control_plane
    from carnet.services.apikeys import create_key
    from carnet.settings.root import Settings

    saved = dict(os.environ)
    os.environ.update(env)
    try:
        plane = build_control_plane(Settings(data_dir=data_dir))
    finally:
        os.environ.clear()
        os.environ.update(saved)
    try:
        return {name: create_key(plane.catalog, plane.pepper, tenant=tenant, roles=list(roles))[0]
                for name, (tenant, *roles) in wanted.items()}
    finally:
        plane.catalog.close()


@dataclass
class Part:
    """One ``carnet`` process, restartable with the same arguments (and port, for an API)."""

    name: str
    root: Path
    argv: list[str]
    env: dict[str, str]
    port: int | None = None
    process: subprocess.Popen[bytes] | None = None
    up: bool = False  # an API: answered since it was last started
    _log_from: int = 0  # the log's size when it was last started

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.root / "carnet.log"

    def spawn(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self._log_from = self.log.stat().st_size if self.log.exists() else 0
        cmd = [sys.executable, "-m", "carnet", *self.argv, "--data-dir", str(self.root / "data")]
        with self.log.open("ab") as log:  # appended: a restart's log follows the killed one's
            self.process = subprocess.Popen(cmd, env={**os.environ, **self.env}, stdout=subprocess.DEVNULL,
                                            stderr=log)

    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def wait_ready(self) -> None:
        if self.port is not None:
            _poll(f"{self.base}/healthz", self.alive, f"{self.name} ({self.log})")
            self.up = True
            return
        deadline = time.monotonic() + _READY_S  # a worker says so on stderr once its threads run
        while _WORKER_READY not in self.log.read_bytes()[self._log_from:]:
            if not self.alive() or time.monotonic() > deadline:
                raise TopologyError(f"{self.name} ({self.log}) did not start its threads")
            time.sleep(0.1)  # poll interval

    def wait_ready_supervised(self, deadline_s: float = 600.0) -> int:
        """``wait_ready``, starting the process again each time it exits before it is ready, as its
        supervisor would (systemd's ``Restart=on-failure``, a Kubernetes restart): a start can fail while
        another fault holds what it needs at boot (the KMS frozen, PostgreSQL restarting). Returns how
        many times it had to be started again."""
        restarts, end = 0, time.monotonic() + deadline_s
        while True:
            try:
                self.wait_ready()
                return restarts
            except TopologyError:
                if self.alive() or time.monotonic() > end:
                    raise
            restarts += 1
            time.sleep(1.0)  # the supervisor's restart delay
            self.spawn()

    def kill(self) -> None:
        """kill -9, and reap it."""
        assert self.process is not None
        self.up = False
        self.process.kill()
        self.process.wait()

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if the process has not ended within 30 s."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()


def _poll(url: str, alive: Any, what: str, timeout: float = _READY_S) -> None:
    """Until ``url`` answers 200 (no fixed sleep: a poll with a deadline), failing fast if it died."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive():
            raise TopologyError(f"{what} exited before it was ready")
        try:
            if httpx.get(url, timeout=1.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)  # poll interval
    raise TopologyError(f"{what} not ready after {timeout:.0f} s")


@dataclass
class QdrantProcess:
    """The Qdrant test server in its own process, its collections on disk across restarts."""

    root: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        cmd = [sys.executable, "-m", "carnet.bench.topology.qdrant_rest", "--port", str(self.port),
               "--root", str(self.root / "collections")]
        self.root.mkdir(parents=True, exist_ok=True)
        with (self.root / "qdrant.log").open("ab") as log:
            self.process = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        _poll(f"{self.url}/healthz", lambda: self.process is not None and self.process.poll() is None,
              f"the Qdrant test server ({self.root / 'qdrant.log'})", timeout=60)

    def stop(self) -> None:
        """SIGTERM (uvicorn's graceful shutdown, then the shards closed and kept), as a node restarted."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class Topology:
    """Started by ``with Topology(...) as t``; everything stopped and removed on exit."""

    def __init__(self, *, apis: int = 2, workers: int = 2, keys: dict[str, tuple[str, str]],
                 worker_threads: int = 2, root: Path | None = None) -> None:
        self._apis, self._workers, self._wanted, self._threads = apis, workers, keys, worker_threads
        self._own_root = root is None
        self.root = root if root is not None else Path(tempfile.mkdtemp(prefix="carnet-soak-"))
        self._stack = ExitStack()
        self.api_parts: list[Part] = []
        self.worker_parts: list[Part] = []
        self.keys: dict[str, str] = {}

    def __enter__(self) -> Topology:
        try:
            self._start()
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._stack.close()
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def _start(self) -> None:
        binaries = bindir()
        if binaries is None:
            raise TopologyError("no PostgreSQL server binaries: apt-get install postgresql")
        # Not under self.root: the server runs as `postgres`, and mkdtemp's parents are private to us.
        pg_root = Path(tempfile.mkdtemp(prefix="carnet-soak-pg-"))
        self.postgres = Cluster(root=pg_root, bindir=binaries, port=free_port(), run_as=server_user())
        self._stack.callback(shutil.rmtree, pg_root, ignore_errors=True)
        self._stack.callback(self.postgres.stop)
        self.postgres.start()
        self.dsn = self.postgres.create_database()
        self.bao = self._stack.enter_context(transit_server(self.root / "bao"))
        self.qdrant = QdrantProcess(self.root / "qdrant")
        self._stack.callback(self.qdrant.stop)
        self.qdrant.start()
        self.collection = f"carnet_soak_{uuid.uuid4().hex[:8]}"
        self.env = environment(self.root, self.dsn, self.qdrant.url, self.collection, self.bao)
        self.keys = create_keys(self.env, self.root / "admin", self._wanted)
        self.worker_parts = [Part(f"worker-{n}", self.root / f"worker-{n}", ["worker", "--threads", str(self._threads)],
                                  self.env) for n in range(self._workers)]
        self.api_parts = [Part(f"api-{n}", self.root / f"api-{n}", ["serve", "--port", str(port)], self.env, port)
                          for n, port in enumerate(free_port() for _ in range(self._apis))]
        for part in (*self.worker_parts, *self.api_parts):  # all at once: each loads the embedder
            self._stack.callback(part.stop)
            part.spawn()
        for part in (*self.api_parts, *self.worker_parts):
            part.wait_ready()

    @property
    def bases(self) -> list[str]:
        return [part.base for part in self.api_parts]

    def pids(self) -> dict[str, int | None]:
        """Every part's pid (None: not running): a fault must leave the others' unchanged."""
        parts: dict[str, int | None] = {p.name: p.pid() if p.alive() else None
                                        for p in (*self.api_parts, *self.worker_parts)}
        parts["qdrant"] = self.qdrant.process.pid if self.qdrant.process else None
        parts["openbao"] = self.bao.process.pid if self.bao.process else None
        return parts

    def command(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``carnet ARGS`` once with the topology's environment (an operator's command), its output kept."""
        cmd = [sys.executable, "-m", "carnet", *args, "--data-dir", str(self.root / "admin")]
        return subprocess.run(cmd, env={**os.environ, **self.env}, capture_output=True, text=True, check=False,
                              timeout=600)

    def logs(self) -> list[Path]:
        return [p.log for p in (*self.api_parts, *self.worker_parts)] + [self.qdrant.root / "qdrant.log"]
