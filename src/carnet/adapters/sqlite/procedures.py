"""``TeamProcedures`` on SQLite (the embedded default): the catalog's file, its own table.

A proposal is made once: a partial unique index on (tenant, folded text) over the procedures still
proposed or approved, so a second identical proposal returns the first. A decision is one
``UPDATE … WHERE status = expected``: of two supervisors deciding at once, one wins.

A procedure read from a member's call keeps that member's keyed hash (``origin``) and is deleted with
the member (``forget_origin``), under ``secure_delete`` so the freed pages are zeroed, then a
checkpoint that truncates the WAL: its text leaves the file and the WAL, not only the table."""

from __future__ import annotations

import builtins
import contextlib
import json
import sqlite3
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from carnet.adapters.sqlite.db import guarded, open_db
from carnet.domain.procedures import ProcedureStatus, TeamProcedure, dedup_key

_SCHEMA = """
CREATE TABLE IF NOT EXISTS team_procedures (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    tenant TEXT NOT NULL,
    text TEXT NOT NULL,
    dedup_key TEXT NOT NULL,
    status TEXT NOT NULL,
    agent_id TEXT,
    queue TEXT,
    applies_when TEXT NOT NULL DEFAULT '[]',
    proposed_by TEXT NOT NULL,
    decided_by TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    origin TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS team_procedures_live ON team_procedures (tenant, dedup_key)
    WHERE status IN ('proposed', 'approved');
CREATE INDEX IF NOT EXISTS team_procedures_status ON team_procedures (tenant, status, seq);
"""

_COLUMNS = ("id, tenant, text, status, proposed_by, created_at, updated_at, agent_id, queue, applies_when, decided_by,"
            " origin")
_LIVE = "status IN ('proposed', 'approved')"


def _procedure(r: Sequence[object]) -> TeamProcedure:
    return TeamProcedure(
        id=str(r[0]), tenant=str(r[1]), text=str(r[2]), status=ProcedureStatus(str(r[3])), proposed_by=str(r[4]),
        created_at=datetime.fromtimestamp(float(str(r[5])), tz=UTC),
        updated_at=datetime.fromtimestamp(float(str(r[6])), tz=UTC),
        agent_id=None if r[7] is None else str(r[7]), queue=None if r[8] is None else str(r[8]),
        applies_when=tuple(json.loads(str(r[9]))), decided_by=None if r[10] is None else str(r[10]),
        origin=None if r[11] is None else str(r[11]))


class SqliteTeamProcedures:
    def __init__(self, path: Path) -> None:
        self._db = open_db(path, schema=_SCHEMA, synchronous="FULL")
        self._db.execute("PRAGMA secure_delete=ON")  # a deleted procedure's text is zeroed, not left in free pages
        have = {str(r[1]) for r in self._db.execute("PRAGMA table_info(team_procedures)").fetchall()}
        if "origin" not in have:  # a catalog made before issue 46
            self._db.execute("ALTER TABLE team_procedures ADD COLUMN origin TEXT")
        self._db.execute("CREATE INDEX IF NOT EXISTS team_procedures_origin ON team_procedures (tenant, origin)"
                         " WHERE origin IS NOT NULL")
        self._lock = threading.Lock()

    def _tx(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        return guarded(self._db, self._lock, "the team procedures")

    def add(self, procedure: TeamProcedure) -> TeamProcedure:
        """``INSERT … ON CONFLICT DO NOTHING`` on the live index, then the stored row."""
        p = procedure
        with self._tx() as db:
            db.execute(
                "INSERT INTO team_procedures (id, tenant, text, dedup_key, status, agent_id, queue, applies_when,"
                " proposed_by, decided_by, created_at, updated_at, origin) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"
                " ON CONFLICT DO NOTHING",
                (p.id, p.tenant, p.text, dedup_key(p.text), p.status.value, p.agent_id, p.queue,
                 json.dumps(list(p.applies_when)), p.proposed_by, p.decided_by, p.created_at.timestamp(),
                 p.updated_at.timestamp(), p.origin))
            if p.origin is None:  # a person's proposal adopts a live derived one with the same text
                db.execute(f"UPDATE team_procedures SET origin = NULL WHERE tenant = ? AND dedup_key = ? AND {_LIVE}",
                           (p.tenant, dedup_key(p.text)))
            row = db.execute(f"SELECT {_COLUMNS} FROM team_procedures WHERE tenant = ? AND dedup_key = ?"
                             f" AND {_LIVE}", (p.tenant, dedup_key(p.text))).fetchone()
        return p if row is None else _procedure(row)

    def get(self, tenant: str, procedure_id: str) -> TeamProcedure | None:
        with self._lock:
            row = self._db.execute(f"SELECT {_COLUMNS} FROM team_procedures WHERE tenant = ? AND id = ?",
                                   (tenant, procedure_id)).fetchone()
        return None if row is None else _procedure(row)

    def list(self, tenant: str, *, status: ProcedureStatus | None = None, limit: int = 200) -> list[TeamProcedure]:
        where, args = ("tenant = ?", [tenant]) if status is None else ("tenant = ? AND status = ?",
                                                                       [tenant, status.value])
        with self._lock:
            rows = self._db.execute(f"SELECT {_COLUMNS} FROM team_procedures WHERE {where} ORDER BY seq LIMIT ?",
                                    (*args, limit)).fetchall()
        return [_procedure(r) for r in rows]

    def decide(self, tenant: str, procedure_id: str, *, expected: ProcedureStatus, status: ProcedureStatus,
               decided_by: str, at: datetime) -> TeamProcedure | None:
        with self._tx() as db:
            row = db.execute(
                f"UPDATE team_procedures SET status = ?, decided_by = ?, updated_at = ?"
                f" WHERE tenant = ? AND id = ? AND status = ? RETURNING {_COLUMNS}",
                (status.value, decided_by, at.timestamp(), tenant, procedure_id, expected.value)).fetchone()
        return None if row is None else _procedure(row)

    def forget_origin(self, tenant: str, origin: str) -> builtins.list[str]:
        """``DELETE … WHERE tenant = ? AND origin = ?``, then ``PRAGMA wal_checkpoint(TRUNCATE)`` (best
        effort: a reader holding the WAL leaves it to the next checkpoint)."""
        with self._tx() as db:
            ids = [str(r[0]) for r in db.execute("DELETE FROM team_procedures WHERE tenant = ? AND origin = ?"
                                                 " RETURNING id", (tenant, origin)).fetchall()]
        if ids:
            with self._lock, contextlib.suppress(sqlite3.OperationalError):  # busy: the next checkpoint does it
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return ids

    def move_origin(self, tenant: str, old: str, new: str) -> int:
        with self._tx() as db:
            return db.execute("UPDATE team_procedures SET origin = ? WHERE tenant = ? AND origin = ?",
                              (new, tenant, old)).rowcount

    def close(self) -> None:
        with self._lock:
            self._db.close()
