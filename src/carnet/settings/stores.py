"""Where records live: the vector store (embedded qdrant-edge or a Qdrant server, whose settings are
``carnet.settings.qdrant``) and the control plane (SQLite files or PostgreSQL, ``CARNET_POSTGRES__*``)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Self

from pydantic import BaseModel, Field, SecretStr, model_validator


class VectorBackend(StrEnum):
    EDGE = "edge"  # qdrant-edge, in-process, one owner process
    SERVER = "server"  # Qdrant server via qdrant-client


class CatalogBackend(StrEnum):
    SQLITE = "sqlite"  # files in the data dir: the embedded default, one node
    POSTGRES = "postgres"  # catalog, intake queue and audit trail in PostgreSQL, shared by several nodes


class PostgresSslMode(StrEnum):
    """libpq's ``sslmode``; production accepts only ``verify-full`` (TLS, CA-verified, host name checked)."""

    DISABLE = "disable"
    ALLOW = "allow"
    PREFER = "prefer"
    REQUIRE = "require"
    VERIFY_CA = "verify-ca"
    VERIFY_FULL = "verify-full"


class PostgresSettings(BaseModel):
    """The PostgreSQL control plane (``CARNET_CATALOG=postgres``): a libpq DSN, or the separate fields."""

    dsn: SecretStr | None = None  # "postgresql://carnet@db.internal:5432/carnet" or "host=… dbname=…"; wins
    host: str = "localhost"
    port: int = Field(5432, ge=1, le=65535)
    dbname: str = "carnet"
    user: str = "carnet"
    password: SecretStr | None = None
    # TLS: these win over anything the DSN says. Ignored by libpq on a Unix socket (local, no network).
    sslmode: PostgresSslMode = PostgresSslMode.VERIFY_FULL
    ca_cert: Path | None = None  # CA bundle for the server's certificate (libpq default: ~/.postgresql/root.crt)
    client_cert: Path | None = None  # client certificate login (pg_hba `cert`), with its key below
    client_key: Path | None = None
    pool_size: int = Field(5, ge=1, le=200)  # connections per store (catalog, intakes, audit) per process
    connect_timeout: float = Field(10.0, gt=0, le=120)  # connecting, and waiting for a pooled connection
    auto_migrate: bool = True  # apply pending migrations at start (false: refuse to start, `carnet db migrate`)
    # Longest wait for a subject's advisory lock (another process erasing or applying an intake), then 503
    # subject_busy (an intake worker retries it later). Its own pool of `pool_size` connections holds the locks.
    lock_timeout: float = Field(30.0, gt=0, le=600)
    # Longest pause between reconnections of the key-cache listener (LISTEN carnet_keys), which starts at 0.5 s
    # and doubles; the caches are flushed when it loses its session and again once it listens again.
    listener_backoff_max: float = Field(10.0, ge=0.5, le=300)

    @model_validator(mode="after")
    def _key_with_cert(self) -> Self:
        if (self.client_cert is None) != (self.client_key is None):
            raise ValueError("CARNET_POSTGRES__CLIENT_CERT and CARNET_POSTGRES__CLIENT_KEY go together")
        return self
