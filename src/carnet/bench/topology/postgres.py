"""A throwaway PostgreSQL cluster from Debian's ``postgresql`` binaries, in a temp dir: the test
suite's (tests/support/postgres.py adds pytest's skip or fail) and ``carnet bench soak``'s.

- initdb refuses to run as root: as root, the cluster belongs to the ``postgres`` system user and
  every server command runs through ``runuser -u postgres --``.
- The database's collation is ICU English (not byte order), so a query that forgets ``COLLATE "C"``
  sorts differently from SQLite and the contract tests show it.
- Local connections (a Unix socket in the temp dir) trust the OS user; TCP on 127.0.0.1 accepts only
  TLS with a client certificate (``hostssl … cert``), from a CA generated here, so ``sslmode=verify-full``
  with a CA bundle and a client key pair is tested for real.
- ``restart`` stops the server at once (``-m immediate``: a crash, the clients' connections cut)
  and starts it again on the same data, port and socket.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from carnet.bench.topology import TopologyError
from carnet.bench.topology.pg_tls import write_test_pki

_START_DEADLINE_S = 30


def bindir() -> Path | None:
    """Where ``initdb`` and ``pg_ctl`` are: on PATH, else Debian's /usr/lib/postgresql/<newest>/bin."""
    on_path = shutil.which("pg_ctl")
    if on_path and shutil.which("initdb"):
        return Path(os.path.realpath(on_path)).parent
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(Path(p).parts[-3]))
    return Path(found[-1]).parent if found else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_user() -> str | None:
    """The system user the server must run as: ``postgres`` when we are root (initdb refuses root)."""
    if os.geteuid() != 0:
        return None
    pwd.getpwnam("postgres")  # KeyError: running as root without a `postgres` user to run the server as
    return "postgres"


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

    def _run(self, *argv: str) -> None:
        command = [str(self.bindir / argv[0]), *argv[1:]]
        if self.run_as is not None:
            command = ["runuser", "-u", self.run_as, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            log = self.root / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise TopologyError(f"{' '.join(argv[:2])} failed ({done.returncode}): {done.stderr}{done.stdout}\n{tail}")

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
        self._start_server()

    def _start_server(self) -> None:
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

    def restart(self) -> None:
        """Down at once (every connection cut, as in a crash), then up on the same data and port."""
        self.stop()
        self._start_server()

    def create_database(self) -> str:
        """A new empty database (the adapters migrate it); its DSN."""
        import psycopg

        name = "t_" + uuid.uuid4().hex[:16]
        with psycopg.connect(self.dsn(), autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name}".encode())
        return self.dsn(name)

    @contextlib.contextmanager
    def database(self) -> Iterator[str]:
        """A new empty database; dropped after, connections and all."""
        import psycopg

        dsn = self.create_database()
        try:
            yield dsn
        finally:
            with psycopg.connect(self.dsn(), autocommit=True) as admin:
                admin.execute(f"DROP DATABASE {dsn.rsplit('dbname=', 1)[1].split()[0]} WITH (FORCE)".encode())
