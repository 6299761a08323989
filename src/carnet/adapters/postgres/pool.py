"""Connections to the PostgreSQL control plane: the libpq connection string (TLS included), a pool
per adapter, the schema brought up to date before the pool opens, and PostgreSQL's failures
translated into Carnet's errors at this edge.

Every pooled connection is in autocommit mode: a read is one round trip, and the adapters open a
transaction (``BEGIN … COMMIT``) only where several statements must hold together."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import psycopg
from psycopg.conninfo import make_conninfo
from psycopg.rows import TupleRow
from psycopg_pool import ConnectionPool, PoolTimeout

from carnet.adapters.postgres import migrate as migrations
from carnet.errors import CarnetError, DependencyUnavailable

Connection = psycopg.Connection[TupleRow]
Pool = ConnectionPool[Connection]

# PostgreSQL could not answer (server down, failover, network, pool exhausted, serialisation):
# a 503, never a 500. Other psycopg errors are bugs and stay what they are.
UNAVAILABLE: tuple[type[Exception], ...] = (psycopg.OperationalError, PoolTimeout)

# Inside a transaction whose commit must be on disk when acknowledged (audit entries, intakes): turns
# synchronous_commit back on if the server or role default is off, never weakening a stricter setting
# (remote_apply with synchronous replicas stays as it is).
DURABLE = "SELECT set_config('synchronous_commit', 'on', true) WHERE current_setting('synchronous_commit') = 'off'"


def utc(at: datetime) -> datetime:
    """Written and read as UTC: timestamptz comes back in the session's time zone, and a naive
    datetime would be read in it too (SQLite's adapters take naive as local time, so do we)."""
    return at.astimezone(UTC)


def conninfo(*, dsn: str | None, host: str, port: int, dbname: str, user: str, password: str | None,
             sslmode: str, ca_cert: Path | None, client_cert: Path | None, client_key: Path | None,
             connect_timeout: float, application_name: str = "carnet") -> str:
    """A libpq connection string: ``dsn`` (URI or ``key=value``) when given, else the separate fields;
    the TLS settings always win over whatever the DSN says about TLS."""
    fields: dict[str, str | int | None] = {} if dsn else {"host": host, "port": port, "dbname": dbname,
                                                           "user": user, "password": password}
    tls = {"sslmode": sslmode, "sslrootcert": ca_cert, "sslcert": client_cert, "sslkey": client_key}
    fields.update({k: str(v) for k, v in tls.items() if v is not None})
    fields.update(connect_timeout=max(2, math.ceil(connect_timeout)), application_name=application_name)
    return make_conninfo(dsn or "", **{k: v for k, v in fields.items() if v is not None})


def open_pool(info: str, *, size: int, timeout: float, migrate: bool, name: str) -> Pool:
    """Bring the schema up to date (or check it is, with ``migrate=False``) on one connection, then open
    a pool of ``size`` connections at most. Raises ``DependencyUnavailable`` with libpq's reason (it
    never contains the password) when PostgreSQL cannot be reached or refuses us."""
    try:
        with psycopg.connect(info, autocommit=True) as conn:
            if migrate:
                migrations.migrate(conn)
            else:
                migrations.require_current(conn)
    except psycopg.Error as exc:
        raise DependencyUnavailable(f"PostgreSQL control plane unreachable: {exc}") from exc
    pool: Pool = ConnectionPool(info, connection_class=psycopg.Connection, kwargs={"autocommit": True},
                                min_size=1, max_size=size, timeout=timeout, name=f"carnet-{name}", open=False,
                                check=ConnectionPool.check_connection)
    try:
        pool.open(wait=True, timeout=timeout)
    except PoolTimeout as exc:
        pool.close()
        raise DependencyUnavailable(f"PostgreSQL control plane: no connection in {timeout}s") from exc
    return pool


@contextlib.contextmanager
def connection(pool: Pool, error: Callable[[], CarnetError], *, transaction: bool = False,
               catch: tuple[type[Exception], ...] = UNAVAILABLE) -> Iterator[Connection]:
    """A pooled connection (inside one transaction when asked); ``catch`` errors become ``error()``."""
    try:
        with pool.connection() as conn:
            if transaction:
                with conn.transaction():
                    yield conn
            else:
                yield conn
    except catch as exc:
        raise error() from exc


def store_connection(pool: Pool, what: str, *,
                     transaction: bool = True) -> contextlib.AbstractContextManager[Connection]:
    """A store's connection: any PostgreSQL failure (or the pool's timeout) raised as
    ``DependencyUnavailable`` naming ``what``."""
    return connection(pool, lambda: DependencyUnavailable(f"{what} is unavailable"), transaction=transaction,
                      catch=(psycopg.Error, *UNAVAILABLE))
