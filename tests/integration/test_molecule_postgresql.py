"""The postgresql_wiring role's molecule scenario (ansible/.../extensions/molecule/postgresql_wiring)
against a real PostgreSQL 15: converge, idempotence, check mode, verify (restart, TLS + SCRAM as the
carnet role, no TLS refused, ``carnet db migrate``, the role's powers); then powers granted to the
role by hand, which another converge takes away; then the logins again, from here with psycopg.

The cluster is this test's, laid out as Debian's as far as the role cares: initdb's defaults for
authentication (peer on the socket, scram-sha-256 over TCP), ``include_dir = 'conf.d'``, no TLS and
no TCP until the role turns them on. It is owned by the ``postgres`` system user (initdb refuses
root), in a directory of its own with its socket, on a port of its own; stopped and removed after.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from carnet.bench.topology.pg_tls import write_test_pki
from carnet.entrypoints.http.server import free_port
from tests.support.molecule import BIN, ansible_environment, molecule, tool

SCENARIO = "postgresql_wiring"
PG_BINDIR = Path("/usr/lib/postgresql/15/bin")  # the role's postgresql_wiring_version
OS_USER = "postgres"  # the role's files and psql calls are the postgres user's
_TIMEOUT_S = 300


@dataclass(frozen=True)
class _Cluster:
    root: Path  # the postgres user's: data directory, socket, log
    port: int

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def log(self) -> Path:
        return self.root / "server.log"


def _as_postgres(*argv: str) -> None:
    done = subprocess.run(["runuser", "-u", OS_USER, "--", *argv], capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{' '.join(argv[:2])} exited {done.returncode}: {done.stderr}{done.stdout}"


@contextlib.contextmanager
def _cluster() -> Iterator[_Cluster]:
    if os.geteuid() != 0:
        pytest.fail("the scenario runs as root (the role chowns to postgres and runs psql through runuser)")
    if not (PG_BINDIR / "pg_ctl").exists():
        pytest.fail(f"PostgreSQL 15's server is needed ({PG_BINDIR}): `apt-get install postgresql-15`")
    try:
        user = pwd.getpwnam(OS_USER)
    except KeyError:
        pytest.fail("there is no `postgres` system user (Debian's postgresql-common creates it)")
    # Not pytest's tmp dir: its parents are private to root, and the server runs as postgres.
    cluster = _Cluster(root=Path(tempfile.mkdtemp(prefix="carnet-pg-wiring-")), port=free_port())
    os.chown(cluster.root, user.pw_uid, user.pw_gid)
    try:
        _as_postgres(
            str(PG_BINDIR / "initdb"),
            "-D",
            str(cluster.data),
            "-U",
            "postgres",
            "--auth-local=peer",
            "--auth-host=scram-sha-256",
            "--encoding=UTF8",
            "--locale=C.UTF-8",
        )
        settings = {
            "port": str(cluster.port),
            "listen_addresses": "''",
            "fsync": "off",
            "unix_socket_directories": f"'{cluster.root}'",
            "include_dir": "'conf.d'",
        }
        with (cluster.data / "postgresql.conf").open("a") as conf:
            conf.writelines(f"{k} = {v}\n" for k, v in settings.items())
        (cluster.data / "conf.d").mkdir(mode=0o755)
        os.chown(cluster.data / "conf.d", user.pw_uid, user.pw_gid)
        _as_postgres(str(PG_BINDIR / "pg_ctl"), "-D", str(cluster.data), "-l", str(cluster.log), "-w", "start")
        yield cluster
    finally:
        if (cluster.data / "postmaster.pid").exists():
            _as_postgres(str(PG_BINDIR / "pg_ctl"), "-D", str(cluster.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(cluster.root, ignore_errors=True)


def _environment(tmp_path: Path, cluster: _Cluster, password: str) -> dict[str, str]:
    tls = write_test_pki(tmp_path / "pki", server_dir=tmp_path / "server-tls")
    return {
        **ansible_environment(tmp_path),
        "MOLECULE_POSTGRESQL_DATA": str(cluster.data),
        "MOLECULE_POSTGRESQL_BINDIR": str(PG_BINDIR),
        "MOLECULE_POSTGRESQL_LOG": str(cluster.log),
        "MOLECULE_POSTGRESQL_SOCKET_DIR": str(cluster.root),
        "MOLECULE_POSTGRESQL_PORT": str(cluster.port),
        "MOLECULE_POSTGRESQL_CA": str(tls.ca),
        "MOLECULE_POSTGRESQL_CERT": str(tls.cert),
        "MOLECULE_POSTGRESQL_KEY": str(tls.key),
        "MOLECULE_POSTGRESQL_PASSWORD": password,
        "MOLECULE_POSTGRESQL_CARNET": str(BIN / "carnet"),
    }


def _check_logins(cluster: _Cluster, password: str, ca: str) -> None:
    """What Carnet sees: verify-full + SCRAM works, clear text is refused, and the role is powerless."""
    dsn = f"host=localhost port={cluster.port} dbname=carnet user=carnet password={password} connect_timeout=5"
    with psycopg.connect(f"{dsn} sslmode=verify-full sslrootcert={ca}", autocommit=True) as conn:
        assert conn.info.pgconn.ssl_in_use
        row = conn.execute(
            "SELECT rolsuper, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = current_user"
        ).fetchone()
        assert row == (False, False, False)
        owners = conn.execute(
            "SELECT nspname, pg_get_userbyid(nspowner) FROM pg_namespace"
            " WHERE nspname IN ('carnet', 'carnet_audit') ORDER BY 1"
        ).fetchall()
        assert owners == [("carnet", "carnet"), ("carnet_audit", "carnet")]
        for statement in (b"CREATE DATABASE not_carnets", b"CREATE ROLE not_carnets"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(statement)
    with pytest.raises(psycopg.OperationalError, match=r"pg_hba\.conf rejects connection"):
        psycopg.connect(f"{dsn} sslmode=disable").close()
    # Nor may the role reach another database (initdb's `host all all ... scram-sha-256` would let it in).
    other = dsn.replace("dbname=carnet", "dbname=postgres")
    for sslmode in ("disable", f"verify-full sslrootcert={ca}"):
        with pytest.raises(psycopg.OperationalError, match=r"pg_hba\.conf rejects connection"):
            psycopg.connect(f"{other} sslmode={sslmode}").close()


@pytest.mark.slow
def test_molecule_postgresql_wiring_scenario(tmp_path: Path) -> None:
    tool("molecule")  # before a cluster is started for nothing
    password = secrets.token_urlsafe(32)
    with _cluster() as cluster:
        env = _environment(tmp_path, cluster, password)
        proc = molecule("test", SCENARIO, env, _TIMEOUT_S)
        assert proc.returncode == 0, f"molecule test exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        # Drift: someone gave the role powers by hand. A converge takes them away again.
        _as_postgres(
            str(PG_BINDIR / "psql"),
            "-X",
            "-q",
            "-h",
            str(cluster.root),
            "-p",
            str(cluster.port),
            "-d",
            "postgres",
            "-c",
            "ALTER ROLE carnet CREATEDB CREATEROLE",
        )
        proc = molecule("converge", SCENARIO, env, _TIMEOUT_S)
        assert proc.returncode == 0, f"molecule converge exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        assert "changed=1 " in proc.stdout, proc.stdout
        _check_logins(cluster, password, env["MOLECULE_POSTGRESQL_CA"])
