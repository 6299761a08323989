"""The audit trail on its own SQLite file (``audit.sqlite3``), apart from the catalog: restoring a
catalog backup must never rewind the audit trail.

Appends run in one ``BEGIN IMMEDIATE`` transaction that reads the tenant's head, links the new
entries and moves the head, so several processes (``serve``, a CLI command) append to one chain
without forking it. The ``heads`` table repeats each chain's last (seq, hash): a deleted tail shows."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

from carnet.adapters.sqlite.db import immediate, open_db
from carnet.domain.audit import AuditEntry, AuditEvent, in_pages, link
from carnet.errors import AuditUnavailable

_SCHEMA = """
CREATE TABLE IF NOT EXISTS audit (
    tenant TEXT NOT NULL,
    seq INTEGER NOT NULL,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    subject TEXT,
    targets TEXT NOT NULL,
    outcome TEXT NOT NULL,
    detail TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL,
    PRIMARY KEY (tenant, seq)
);
CREATE TABLE IF NOT EXISTS heads (
    tenant TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    hash TEXT NOT NULL
);
"""

_COLUMNS = "tenant, seq, at, actor, action, subject, targets, outcome, detail, prev_hash, hash"


class SqliteAuditLog:
    """``AuditLog`` on one SQLite file (WAL, synchronous=FULL: an acknowledged entry survives a power cut)."""

    def __init__(self, path: Path) -> None:
        self._db = open_db(path, schema=_SCHEMA, synchronous="FULL")
        self._lock = threading.Lock()

    def append(self, events: Sequence[AuditEvent]) -> list[AuditEntry]:
        """Link and store ``events`` in order, in one transaction per call."""
        written: list[AuditEntry] = []
        try:
            with immediate(self._db, self._lock):
                heads: dict[str, tuple[int, str] | None] = {}
                for event in events:
                    if event.tenant not in heads:
                        heads[event.tenant] = self._head(event.tenant)
                    entry = link(heads[event.tenant], event)
                    self._db.execute(f"INSERT INTO audit ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                                     _row(entry))
                    heads[event.tenant] = (entry.seq, entry.hash)
                    written.append(entry)
                for tenant, head in heads.items():
                    assert head is not None
                    self._db.execute("INSERT OR REPLACE INTO heads (tenant, seq, hash) VALUES (?,?,?)",
                                     (tenant, *head))
        except sqlite3.Error as exc:
            raise AuditUnavailable("the audit trail cannot be written") from exc
        return written

    def _head(self, tenant: str) -> tuple[int, str] | None:
        row = self._db.execute("SELECT seq, hash FROM heads WHERE tenant = ?", (tenant,)).fetchone()
        return None if row is None else (int(row[0]), str(row[1]))

    def head(self, tenant: str) -> tuple[int, str] | None:
        with self._lock:
            return self._head(tenant)

    def entries(self, tenant: str, *, after_seq: int = 0, page: int = 1000) -> Iterator[AuditEntry]:
        """Every entry of ``tenant`` in sequence order, read in pages (never the whole log in memory)."""
        def read_after(seq: int) -> list[AuditEntry]:
            with self._lock:
                rows = self._db.execute(f"SELECT {_COLUMNS} FROM audit WHERE tenant = ? AND seq > ?"
                                        " ORDER BY seq LIMIT ?", (tenant, seq, page)).fetchall()
            return [_entry(r) for r in rows]

        return in_pages(read_after, after_seq)

    def tenants(self) -> list[str]:
        with self._lock:
            rows = self._db.execute("SELECT tenant FROM heads UNION SELECT DISTINCT tenant FROM audit"
                                    " ORDER BY 1").fetchall()
        return [str(r[0]) for r in rows]

    def check(self) -> None:
        try:
            with self._lock:
                self._db.execute("SELECT 1 FROM heads LIMIT 1").fetchall()
        except sqlite3.Error as exc:
            raise AuditUnavailable("the audit trail cannot be read") from exc

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _row(entry: AuditEntry) -> tuple[object, ...]:
    e = entry.event
    return (e.tenant, entry.seq, e.at.astimezone(UTC).isoformat(), e.actor, e.action, e.subject,
            json.dumps(list(e.targets)), e.outcome, json.dumps(dict(e.detail), sort_keys=True),
            entry.prev_hash, entry.hash)


def _entry(r: Sequence[object]) -> AuditEntry:
    event = AuditEvent(
        tenant=str(r[0]), at=datetime.fromisoformat(str(r[2])), actor=str(r[3]), action=str(r[4]),
        subject=None if r[5] is None else str(r[5]), targets=tuple(json.loads(str(r[6]))), outcome=str(r[7]),
        detail=json.loads(str(r[8])),
    )
    return AuditEntry(seq=int(str(r[1])), event=event, prev_hash=str(r[9]), hash=str(r[10]))
