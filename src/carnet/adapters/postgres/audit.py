"""``AuditLog`` on PostgreSQL (schema ``carnet_audit``, apart from the catalog's dumps: restoring the
catalog must never rewind the audit trail).

An append is one transaction that locks the head row of each tenant it writes to
(``SELECT … FOR UPDATE``, the row inserted first if missing), links the entries after that head and
moves it. Appenders on several nodes therefore queue on the head row instead of forking the chain.
Heads are locked in tenant order, so two appends spanning the same tenants cannot deadlock. The
entries table refuses UPDATE, DELETE and TRUNCATE (a trigger, migration 0001)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import psycopg

from carnet.adapters.postgres.pool import DURABLE, UNAVAILABLE, Pool, connection, utc
from carnet.domain.audit import GENESIS, AuditEntry, AuditEvent, in_pages, link
from carnet.errors import AuditUnavailable

_COLUMNS = "tenant, seq, at, actor, action, subject, targets, outcome, detail, prev_hash, hash"
_ERRORS: tuple[type[Exception], ...] = (psycopg.Error, *UNAVAILABLE)


def _write_failed() -> AuditUnavailable:
    return AuditUnavailable("the audit trail cannot be written")


def _read_failed() -> AuditUnavailable:
    return AuditUnavailable("the audit trail cannot be read")


class PostgresAuditLog:
    """``AuditLog`` over a pool of connections: one chain per tenant, shared by every node."""

    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    def append(self, events: Sequence[AuditEvent]) -> list[AuditEntry]:
        """Link and store ``events`` in order, all or nothing, in one transaction per call."""
        if not events:
            return []
        written: list[AuditEntry] = []
        with connection(self._pool, _write_failed, transaction=True, catch=_ERRORS) as db:
            db.execute(DURABLE)
            heads: dict[str, tuple[int, str] | None] = {}
            for tenant in sorted({e.tenant for e in events}):
                db.execute("INSERT INTO carnet_audit.heads (tenant, seq, hash) VALUES (%s, 0, %s)"
                           " ON CONFLICT (tenant) DO NOTHING", (tenant, GENESIS))
                row = db.execute("SELECT seq, hash FROM carnet_audit.heads WHERE tenant = %s FOR UPDATE",
                                 (tenant,)).fetchone()
                assert row is not None
                heads[tenant] = None if row[0] == 0 else (int(row[0]), str(row[1]))
            for event in events:
                entry = link(heads[event.tenant], event)
                heads[event.tenant] = (entry.seq, entry.hash)
                written.append(entry)
            with db.cursor() as cur:
                cur.executemany(f"INSERT INTO carnet_audit.entries ({_COLUMNS})"
                                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)", [_row(e) for e in written])
                cur.executemany("UPDATE carnet_audit.heads SET seq = %s, hash = %s WHERE tenant = %s",
                                [(h[0], h[1], t) for t, h in heads.items() if h is not None])
        return written

    def head(self, tenant: str) -> tuple[int, str] | None:
        with connection(self._pool, _read_failed, catch=_ERRORS) as db:
            row = db.execute("SELECT seq, hash FROM carnet_audit.heads WHERE tenant = %s AND seq > 0",
                             (tenant,)).fetchone()
        return None if row is None else (int(row[0]), str(row[1]))

    def entries(self, tenant: str, *, after_seq: int = 0, page: int = 1000) -> Iterator[AuditEntry]:
        """Every entry of ``tenant`` in sequence order, read in pages (never the whole log in memory)."""
        def read_after(seq: int) -> list[AuditEntry]:
            with connection(self._pool, _read_failed, catch=_ERRORS) as db:
                rows = db.execute(f"SELECT {_COLUMNS} FROM carnet_audit.entries WHERE tenant = %s AND seq > %s"
                                  " ORDER BY seq LIMIT %s", (tenant, seq, page)).fetchall()
            return [_entry(r) for r in rows]

        return in_pages(read_after, after_seq)

    def tenants(self) -> list[str]:
        with connection(self._pool, _read_failed, catch=_ERRORS) as db:
            rows = db.execute("SELECT tenant FROM carnet_audit.heads WHERE seq > 0"
                              " UNION SELECT DISTINCT tenant FROM carnet_audit.entries ORDER BY 1").fetchall()
        return [str(r[0]) for r in rows]

    def check(self) -> None:
        with connection(self._pool, _read_failed, catch=_ERRORS) as db:
            db.execute("SELECT 1 FROM carnet_audit.heads LIMIT 1").fetchall()

    def close(self) -> None:
        self._pool.close()


def _row(entry: AuditEntry) -> tuple[object, ...]:
    e = entry.event
    return (e.tenant, entry.seq, utc(e.at), e.actor, e.action, e.subject, json.dumps(list(e.targets)), e.outcome,
            json.dumps(dict(e.detail), sort_keys=True), entry.prev_hash, entry.hash)


def _entry(r: Sequence[Any]) -> AuditEntry:
    event = AuditEvent(tenant=r[0], at=utc(r[2]), actor=r[3], action=r[4], subject=r[5],
                       targets=tuple(json.loads(r[6])), outcome=r[7], detail=json.loads(r[8]))
    return AuditEntry(seq=int(r[1]), event=event, prev_hash=r[9], hash=r[10])
