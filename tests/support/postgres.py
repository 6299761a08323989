"""A throwaway PostgreSQL cluster for the tests (the server binaries from Debian's ``postgresql``
package, which scripts/test.sh installs): created once per session in a temp dir, one database per
test, stopped and deleted at the end.

- initdb refuses to run as root: as root, the cluster belongs to the ``postgres`` system user and
  every server command runs through ``runuser -u postgres --``.
- The database's collation is ICU English (not byte order), so a query that forgets ``COLLATE "C"``
  sorts differently from SQLite and the contract tests show it.
- Local connections (a Unix socket in the temp dir) trust the OS user; TCP on 127.0.0.1 accepts only
  TLS with a client certificate (``hostssl … cert``), from a CA generated here, so ``sslmode=verify-full``
  with a CA bundle and a client key pair is tested for real.
- No PostgreSQL: the tests fail with the way to install it; ``TEST_ALLOW_NO_POSTGRES=1`` turns
  that into a skip on a developer's machine.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.pg_tls import write_test_pki

if TYPE_CHECKING:
    from carnet.adapters.postgres.pool import Pool

_START_DEADLINE_S = 30
ALLOW_MISSING = "TEST_ALLOW_NO_POSTGRES"  # not CARNET_*: Settings refuses unknown CARNET_ variables


def _bindir() -> Path | None:
    """Where ``initdb`` and ``pg_ctl`` are: on PATH, else Debian's /usr/lib/postgresql/<newest>/bin."""
    on_path = shutil.which("pg_ctl")
    if on_path and shutil.which("initdb"):
        return Path(os.path.realpath(on_path)).parent
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(Path(p).parts[-3]))
    return Path(found[-1]).parent if found else None


def _unavailable(why: str) -> None:
    message = (f"PostgreSQL is needed by these tests: {why}. Install the server (`apt-get install postgresql`; "
               f"scripts/test.sh does) or set {ALLOW_MISSING}=1 to skip them on a developer machine.")
    if os.environ.get(ALLOW_MISSING) == "1":
        pytest.skip(message)
    pytest.fail(message, pytrace=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Cluster:
    root: Path  # owned by the server's user: the data dir, the socket, the server's key pair
    bindir: Path
    port: int
    run_as: str | None  # the system user the server runs as when we are root

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def pki(self) -> Path:
        return self.root / "pki"  # the CA and the client's key pair, owned by us

    def dsn(self, dbname: str = "postgres") -> str:
        """Through the Unix socket, as the superuser (trust)."""
        return f"host={self.root} port={self.port} dbname={dbname} user=postgres"

    def tls_dsn(self, dbname: str = "postgres") -> str:
        """Over TCP to ``localhost`` (TLS settings to be added by the caller)."""
        return f"host=localhost port={self.port} dbname={dbname} user=postgres"

    def _run(self, *argv: str) -> None:
        command = [str(self.bindir / argv[0]), *argv[1:]]
        if self.run_as is not None:
            command = ["runuser", "-u", self.run_as, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            log = self.root / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            pytest.fail(f"{' '.join(argv[:2])} failed ({done.returncode}): {done.stderr}{done.stdout}\n{tail}")

    def start(self) -> None:
        server_files = write_test_pki(self.pki, server_dir=self.root / "server-tls")
        self._own(self.root)
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "--encoding=UTF8",
                  "--locale=C.UTF-8", "--locale-provider=icu", "--icu-locale=en-US")
        settings = {
            "listen_addresses": "'localhost'", "port": str(self.port), "unix_socket_directories": f"'{self.root}'",
            "max_connections": "300", "shared_buffers": "'32MB'", "fsync": "off", "full_page_writes": "off",
            "ssl": "on", "ssl_cert_file": f"'{server_files.cert}'", "ssl_key_file": f"'{server_files.key}'",
            "ssl_ca_file": f"'{server_files.ca}'",
        }
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.writelines(f"{k} = {v}\n" for k, v in settings.items())
        (self.data / "pg_hba.conf").write_text("local all all trust\nhostssl all all 127.0.0.1/32 cert\n"
                                               "hostssl all all ::1/128 cert\nhost all all all reject\n")
        self._own(self.root)
        self._own(self.pki, back_to_us=True)
        # pg_ctl -w polls the server until it accepts connections, up to the deadline.
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"), "-w",
                  "-t", str(_START_DEADLINE_S), "start")

    def _own(self, path: Path, *, back_to_us: bool = False) -> None:
        """Give ``path`` to the server's user (or, for the PKI the client reads, back to us)."""
        if self.run_as is None:
            return
        user = pwd.getpwnam(self.run_as)
        uid, gid = (os.getuid(), os.getgid()) if back_to_us else (user.pw_uid, user.pw_gid)
        os.chown(path, uid, gid)
        for parent, dirs, files in os.walk(path):
            for name in dirs + files:
                os.chown(os.path.join(parent, name), uid, gid)

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")

    @contextlib.contextmanager
    def database(self) -> Iterator[str]:
        """A new empty database (the adapters migrate it); dropped after, connections and all."""
        import psycopg

        name = "t_" + uuid.uuid4().hex[:16]
        with psycopg.connect(self.dsn(), autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name}".encode())
        try:
            yield self.dsn(name)
        finally:
            with psycopg.connect(self.dsn(), autocommit=True) as admin:
                admin.execute(f"DROP DATABASE {name} WITH (FORCE)".encode())


@contextlib.contextmanager
def running_cluster() -> Iterator[Cluster]:
    """A started cluster for the session (fails, or skips with the escape hatch, without PostgreSQL)."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _unavailable("psycopg is not installed (pip install -e '.[dev]')")
    bindir = _bindir()
    if bindir is None:
        _unavailable("no initdb/pg_ctl on PATH or under /usr/lib/postgresql/*/bin")
        raise AssertionError("unreachable")
    run_as = None
    if os.geteuid() == 0:
        run_as = "postgres"
        try:
            pwd.getpwnam(run_as)
        except KeyError:
            _unavailable("running as root and there is no `postgres` system user to run the server as")
    # Not pytest's tmp dir: its parents are private to us, and the server runs as another user.
    root = Path(tempfile.mkdtemp(prefix="carnet-pg-"))
    cluster = Cluster(root=root, bindir=bindir, port=_free_port(), run_as=run_as)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


def open_test_pool(dsn: str, *, size: int = 4) -> Pool:
    """A pool on a test database, migrating it first (what bootstrap does with the settings)."""
    from carnet.adapters.postgres.pool import open_pool

    return open_pool(dsn, size=size, timeout=10, migrate=True, name="test")
