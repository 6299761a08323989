"""Reaching the PostgreSQL control plane: the settings, TLS for real (``verify-full`` against the
test CA, a client certificate login, refusals with a foreign CA or without TLS), and an outage that
turns into 503-class errors and then recovers without a restart."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict
from pydantic import SecretStr, ValidationError

from carnet.adapters.postgres.audit import PostgresAuditLog
from carnet.adapters.postgres.catalog import PostgresCatalog
from carnet.adapters.postgres.intakes import PostgresIntakeStore
from carnet.adapters.postgres.pool import Pool, conninfo, open_pool
from carnet.bootstrap.stores import build_catalog, postgres_conninfo
from carnet.domain.records import Scope
from carnet.errors import AuditUnavailable, DependencyUnavailable
from carnet.settings.root import CatalogBackend, KmsBackend, PostgresSettings, PostgresSslMode, Settings
from tests.support.postgres import Cluster


def _tls_settings(cluster: Cluster, dsn: str, **tls: object) -> Settings:
    pki = cluster.pki
    fields: dict[str, object] = {"host": "localhost", "port": cluster.port, "dbname": conninfo_to_dict(dsn)["dbname"],
                                 "user": "postgres", "sslmode": PostgresSslMode.VERIFY_FULL, "ca_cert": pki / "ca.pem",
                                 "client_cert": pki / "client.pem", "client_key": pki / "client.key",
                                 "connect_timeout": 5, **tls}
    return Settings(catalog=CatalogBackend.POSTGRES, postgres=PostgresSettings(**fields))  # type: ignore[arg-type]


def test_verify_full_with_a_client_certificate(postgres_cluster: Cluster, postgres_dsn: str) -> None:
    catalog = build_catalog(_tls_settings(postgres_cluster, postgres_dsn))
    try:
        catalog.register_subject(Scope("t1", "h"), hash_key="~k", sealed_id=b"x")
        assert catalog.is_registered(Scope("t1", "h"))
        with psycopg.connect(postgres_cluster.dsn(), autocommit=True) as admin:
            rows = admin.execute("SELECT s.ssl, s.client_dn FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)"
                                 " WHERE a.application_name = 'carnet-catalog'").fetchall()
        assert rows and all(r == (True, "/CN=postgres") for r in rows)
    finally:
        catalog.close()


@pytest.mark.parametrize(("tls", "reason"), [
    ({"ca_cert": "other-ca.pem"}, "certificate verify failed"),
    ({"sslmode": PostgresSslMode.DISABLE}, "no encryption"),
])
def test_connections_the_server_or_we_do_not_trust_are_refused(postgres_cluster: Cluster, postgres_dsn: str,
                                                               tls: dict[str, object], reason: str) -> None:
    if "ca_cert" in tls:
        tls = {"ca_cert": postgres_cluster.pki / str(tls["ca_cert"])}
    with pytest.raises(DependencyUnavailable, match=reason):
        build_catalog(_tls_settings(postgres_cluster, postgres_dsn, **tls))


def test_connection_string_from_settings() -> None:
    info = conninfo_to_dict(postgres_conninfo(Settings(catalog=CatalogBackend.POSTGRES, postgres=PostgresSettings(
        dsn=SecretStr("postgresql://carnet:s3cret@db.internal:5433/carnet?sslmode=disable"),
        connect_timeout=0.5)), "catalog"))
    assert info["sslmode"] == "verify-full" and info["host"] == "db.internal" and info["password"] == "s3cret"
    assert info["connect_timeout"] == "2" and info["application_name"] == "carnet-catalog"
    fields = conninfo_to_dict(conninfo(dsn=None, host="h", port=1, dbname="d", user="u", password=None,
                                       sslmode="require", ca_cert=None, client_cert=None, client_key=None,
                                       connect_timeout=10))
    assert fields == {"host": "h", "port": "1", "dbname": "d", "user": "u", "sslmode": "require",
                      "connect_timeout": "10", "application_name": "carnet"}


def test_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CARNET_CATALOG", "postgres")
    monkeypatch.setenv("CARNET_POSTGRES__DSN", "host=db dbname=carnet user=carnet password=hunter2")
    monkeypatch.setenv("CARNET_POSTGRES__POOL_SIZE", "3")
    monkeypatch.setenv("CARNET_POSTGRES__SSLMODE", "verify-ca")
    settings = Settings()
    assert settings.catalog is CatalogBackend.POSTGRES and settings.postgres.pool_size == 3
    assert "hunter2" not in repr(settings) and settings.postgres.sslmode is PostgresSslMode.VERIFY_CA
    with pytest.raises(ValidationError, match="CARNET_POSTGRES__SSLMODE must be verify-full"):
        Settings(environment="production", api_key_pepper=SecretStr("p" * 32), kms_backend=KmsBackend.VAULT)  # type: ignore[arg-type]
    monkeypatch.setenv("CARNET_POSTGRES__SSLMODE", "verify-full")
    with pytest.raises(ValidationError) as refused:
        Settings(environment="production", kms_backend=KmsBackend.VAULT)  # type: ignore[arg-type]
    assert "SSLMODE" not in str(refused.value)  # refused for the missing pepper only
    with pytest.raises(ValidationError, match="go together"):
        PostgresSettings(client_cert="/etc/carnet/client.pem")  # type: ignore[arg-type]


def _eventually(probe: Callable[[], object], seconds: float = 20) -> None:
    deadline = datetime.now(UTC) + timedelta(seconds=seconds)
    while True:
        try:
            probe()
            return
        except DependencyUnavailable:
            if datetime.now(UTC) > deadline:
                raise


QUIET = 1.0  # seconds without any backend of the test database before the outage is taken as total


def test_an_outage_is_unavailable_then_recovers(postgres_cluster: Cluster, postgres_dsn: str) -> None:
    """Connections killed (a failover) are replaced; a database that refuses connections gives the
    stores' 503-class errors; once it is back the same objects work again."""
    def pool() -> Pool:
        return open_pool(postgres_dsn, size=2, timeout=0.5, migrate=True, name="test")

    catalog, intakes, audit = PostgresCatalog(pool()), PostgresIntakeStore(pool()), PostgresAuditLog(pool())
    db = conninfo_to_dict(postgres_dsn)["dbname"]
    try:
        with psycopg.connect(postgres_cluster.dsn(), autocommit=True) as admin:
            kill = f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{db}'".encode()
            admin.execute(kill)
            catalog.check()
            intakes.stats()
            audit.check()  # every pooled connection was dead: each was noticed and replaced
            admin.execute(f"ALTER DATABASE {db} ALLOW_CONNECTIONS false".encode())
            admin.execute(kill)
            # pg_terminate_backend only signals: on a loaded machine a backend can still answer one query.
            # And a pool's background reconnection that got past the connection check just before the
            # ALTER registers after the first kill, possibly after a count that saw none (a backend still
            # starting up is not listed yet): kill again until no backend is left for QUIET seconds.
            left = f"SELECT count(*) FROM pg_stat_activity WHERE datname = '{db}'".encode()
            deadline = time.monotonic() + 30
            quiet_since: float | None = None
            while time.monotonic() < deadline:
                row = admin.execute(left).fetchone()
                if row is not None and row[0] == 0:
                    quiet_since = quiet_since or time.monotonic()
                    if time.monotonic() - quiet_since >= QUIET:
                        break
                else:
                    quiet_since = None
                    admin.execute(kill)
                time.sleep(0.05)
            assert quiet_since is not None and time.monotonic() - quiet_since >= QUIET, (
                f"{row} backends of the test database still alive")
            with pytest.raises(DependencyUnavailable):
                catalog.check()
            with pytest.raises(DependencyUnavailable):
                intakes.stats()
            with pytest.raises(AuditUnavailable):
                audit.head("t1")
            admin.execute(f"ALTER DATABASE {db} ALLOW_CONNECTIONS true".encode())
        _eventually(catalog.check)
        _eventually(intakes.stats)
        _eventually(audit.check)
    finally:
        catalog.close()
        intakes.close()
        audit.close()
