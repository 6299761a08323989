"""The intake queue on SQLite (the embedded default): the catalog's file, its own table.

Every state change is one ``BEGIN IMMEDIATE`` transaction, so worker threads (and a `carnet intakes
retry` run beside the server) never take the same intake twice. Ordering per subject comes from the
``seq`` column: only a subject's oldest unfinished intake may be leased."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from carnet.adapters.sqlite.db import guarded, open_db
from carnet.domain.intake import Intake, IntakeStatus, QueueStats

_SCHEMA = """
CREATE TABLE IF NOT EXISTS intakes (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    tenant TEXT NOT NULL,
    subject TEXT NOT NULL,
    session_id TEXT,
    idempotency_key TEXT,
    actor TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    reason TEXT,
    memory_ids TEXT NOT NULL DEFAULT '[]',
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    next_attempt_at REAL,
    lease_owner TEXT,
    lease_until REAL,
    sealed BLOB NOT NULL,
    request_fingerprint TEXT,
    session_key TEXT,
    context_until REAL
);
CREATE UNIQUE INDEX IF NOT EXISTS intakes_idempotency ON intakes (tenant, subject, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS intakes_queue ON intakes (tenant, subject, status, seq);
CREATE INDEX IF NOT EXISTS intakes_status ON intakes (status, seq);
"""

# after the columns an older queue gains (``__init__``)
_CONTEXT_INDEXES = """
CREATE INDEX IF NOT EXISTS intakes_session ON intakes (tenant, subject, session_key, seq)
    WHERE session_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS intakes_context ON intakes (context_until) WHERE context_until IS NOT NULL;
"""

_COLUMNS = ("id, tenant, subject, status, created_at, updated_at, session_id, idempotency_key, attempts, reason, "
            "memory_ids, next_attempt_at, lease_owner, lease_until, actor, sealed, request_fingerprint, session_key,"
            " context_until")
_UNFINISHED = "('pending', 'processing')"


def _ts(at: datetime | None) -> float | None:
    return None if at is None else at.timestamp()


def _dt(ts: object) -> datetime | None:
    return None if ts is None else datetime.fromtimestamp(float(str(ts)), tz=UTC)


def _intake(r: Sequence[object]) -> Intake:
    created, updated = _dt(r[4]), _dt(r[5])
    assert created is not None and updated is not None
    return Intake(
        id=str(r[0]), tenant=str(r[1]), subject=str(r[2]), status=IntakeStatus(str(r[3])), created_at=created,
        updated_at=updated, session_id=None if r[6] is None else str(r[6]),
        idempotency_key=None if r[7] is None else str(r[7]), attempts=int(str(r[8])),
        reason=None if r[9] is None else str(r[9]), memory_ids=tuple(json.loads(str(r[10]))),
        next_attempt_at=_dt(r[11]), lease_owner=None if r[12] is None else str(r[12]), lease_until=_dt(r[13]),
        actor=str(r[14]), sealed=bytes(r[15]) if isinstance(r[15], bytes | bytearray | memoryview) else b"",
        fingerprint=None if r[16] is None else str(r[16]), session_key=None if r[17] is None else str(r[17]),
        context_until=_dt(r[18]),
    )


class SqliteIntakeStore:
    def __init__(self, path: Path) -> None:
        self._db = open_db(path, schema=_SCHEMA, synchronous="FULL")  # an acknowledged intake survives a power cut
        self._lock = threading.Lock()
        have = {str(r[1]) for r in self._db.execute("PRAGMA table_info(intakes)").fetchall()}
        for column, kind in (("request_fingerprint", "TEXT"), ("session_key", "TEXT"), ("context_until", "REAL")):
            if column not in have:  # a queue created by an older Carnet
                self._db.execute(f"ALTER TABLE intakes ADD COLUMN {column} {kind}")
        self._db.executescript(_CONTEXT_INDEXES)

    def _tx(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        return guarded(self._db, self._lock, "the intake queue")

    def add(self, intake: Intake) -> Intake:
        with self._tx() as db:
            if intake.idempotency_key is not None:
                row = db.execute(f"SELECT {_COLUMNS} FROM intakes WHERE tenant = ? AND subject = ?"
                                 " AND idempotency_key = ?",
                                 (intake.tenant, intake.subject, intake.idempotency_key)).fetchone()
                if row is not None:
                    return _intake(row)
            db.execute(
                "INSERT INTO intakes (id, tenant, subject, session_id, idempotency_key, actor, status, attempts,"
                " created_at, updated_at, next_attempt_at, sealed, request_fingerprint, session_key)"
                " VALUES (?,?,?,?,?,?,?,0,?,?,?,?,?,?)",
                (intake.id, intake.tenant, intake.subject, intake.session_id, intake.idempotency_key, intake.actor,
                 IntakeStatus.PENDING.value, _ts(intake.created_at), _ts(intake.created_at),
                 _ts(intake.created_at), intake.sealed, intake.fingerprint, intake.session_key))
        return intake

    def get(self, tenant: str, intake_id: str) -> Intake | None:
        with self._lock:
            row = self._db.execute(f"SELECT {_COLUMNS} FROM intakes WHERE id = ? AND tenant = ?",
                                   (intake_id, tenant)).fetchone()
        return None if row is None else _intake(row)

    def lease(self, *, owner: str, now: datetime, seconds: float, limit: int = 1) -> list[Intake]:
        t = now.timestamp()
        with self._tx() as db:
            rows = db.execute(
                f"SELECT {_COLUMNS} FROM intakes i WHERE i.status IN {_UNFINISHED}"
                f" AND i.seq = (SELECT MIN(j.seq) FROM intakes j WHERE j.tenant = i.tenant AND j.subject = i.subject"
                f"              AND j.status IN {_UNFINISHED})"
                " AND ((i.status = 'pending' AND i.next_attempt_at <= ?)"
                "      OR (i.status = 'processing' AND i.lease_until < ?))"
                # a dead intake sent back is older than one of its subject's already running: it waits
                " AND NOT EXISTS (SELECT 1 FROM intakes p WHERE p.tenant = i.tenant AND p.subject = i.subject"
                "                 AND p.id != i.id AND p.status = 'processing' AND p.lease_until >= ?)"
                " ORDER BY i.seq LIMIT ?", (t, t, t, limit)).fetchall()
            taken = []
            for r in rows:
                db.execute("UPDATE intakes SET status = 'processing', lease_owner = ?, lease_until = ?,"
                           " attempts = attempts + 1, updated_at = ? WHERE id = ?", (owner, t + seconds, t, r[0]))
                taken.append(_intake(r))
        return [_leased(i, owner, now, seconds) for i in taken]

    def renew(self, intake_id: str, *, owner: str, until: datetime) -> bool:
        with self._tx() as db:
            cur = db.execute("UPDATE intakes SET lease_until = ? WHERE id = ? AND lease_owner = ?"
                             " AND status = 'processing'", (_ts(until), intake_id, owner))
        return cur.rowcount == 1

    def stage(self, intake_id: str, *, owner: str, sealed: bytes) -> bool:
        with self._tx() as db:
            cur = db.execute("UPDATE intakes SET sealed = ? WHERE id = ? AND lease_owner = ? AND status = 'processing'",
                             (sealed, intake_id, owner))
        return cur.rowcount == 1

    def complete(self, intake_id: str, *, owner: str, memory_ids: Sequence[str], now: datetime,
                 keep_until: datetime | None = None) -> bool:
        with self._tx() as db:
            cur = db.execute("UPDATE intakes SET status = 'done', memory_ids = ?, reason = NULL, lease_owner = NULL,"
                             " lease_until = NULL, updated_at = ?, context_until = ?,"
                             " sealed = CASE WHEN ? IS NULL THEN X'' ELSE sealed END"
                             " WHERE id = ? AND lease_owner = ? AND status = 'processing'",
                             (json.dumps(list(memory_ids)), _ts(now), _ts(keep_until), _ts(keep_until), intake_id,
                              owner))
        return cur.rowcount == 1

    def session_context(self, tenant: str, subject: str, session_key: str, *, now: datetime) -> list[Intake]:
        with self._lock:
            rows = self._db.execute(f"SELECT {_COLUMNS} FROM intakes WHERE tenant = ? AND subject = ?"
                                    " AND session_key = ? AND status = 'done' AND context_until > ? ORDER BY seq",
                                    (tenant, subject, session_key, _ts(now))).fetchall()
        return [_intake(r) for r in rows]

    def expire_context(self, now: datetime) -> int:
        with self._tx() as db:
            cur = db.execute("UPDATE intakes SET sealed = X'', context_until = NULL"
                             " WHERE context_until IS NOT NULL AND context_until <= ?", (_ts(now),))
        return cur.rowcount

    def fail(self, intake_id: str, *, owner: str, reason: str, now: datetime, retry_at: datetime | None,
             counted: bool = True) -> bool:
        status = IntakeStatus.PENDING if retry_at is not None else IntakeStatus.DEAD
        with self._tx() as db:
            cur = db.execute("UPDATE intakes SET status = ?, reason = ?, next_attempt_at = ?, lease_owner = NULL,"
                             " lease_until = NULL, updated_at = ?, attempts = MAX(0, attempts - ?)"
                             " WHERE id = ? AND lease_owner = ? AND status = 'processing'",
                             (status.value, reason, _ts(retry_at), _ts(now), 0 if counted else 1, intake_id, owner))
        return cur.rowcount == 1

    def retry_dead(self, *, tenant: str | None = None, intake_id: str | None = None, now: datetime) -> int:
        with self._tx() as db:
            cur = db.execute("UPDATE intakes SET status = 'pending', attempts = 0, next_attempt_at = ?, updated_at = ?"
                             " WHERE status = 'dead' AND (? IS NULL OR tenant = ?) AND (? IS NULL OR id = ?)",
                             (_ts(now), _ts(now), tenant, tenant, intake_id, intake_id))
        return cur.rowcount

    def stats(self, tenant: str | None = None) -> QueueStats:
        with self._lock:
            counts = dict(self._db.execute("SELECT status, COUNT(*) FROM intakes WHERE status != 'done'"
                                           " AND (? IS NULL OR tenant = ?) GROUP BY status",
                                           (tenant, tenant)).fetchall())
            oldest = self._db.execute("SELECT MIN(created_at) FROM intakes WHERE status = 'pending'"
                                      " AND (? IS NULL OR tenant = ?)", (tenant, tenant)).fetchone()[0]
        return QueueStats(pending=int(counts.get("pending", 0)), processing=int(counts.get("processing", 0)),
                          dead=int(counts.get("dead", 0)), oldest_pending_at=_dt(oldest))

    def dead(self, tenant: str, *, limit: int = 100) -> list[Intake]:
        with self._lock:
            rows = self._db.execute(f"SELECT {_COLUMNS} FROM intakes WHERE tenant = ? AND status = 'dead'"
                                    " ORDER BY updated_at DESC, seq DESC LIMIT ?", (tenant, limit)).fetchall()
        return [replace(_intake(r), sealed=b"") for r in rows]

    def forget_subject(self, tenant: str, subject: str) -> int:
        with self._tx() as db:
            cur = db.execute("DELETE FROM intakes WHERE tenant = ? AND subject = ?", (tenant, subject))
        return cur.rowcount

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _leased(i: Intake, owner: str, now: datetime, seconds: float) -> Intake:
    return replace(i, status=IntakeStatus.PROCESSING, lease_owner=owner, lease_until=now + timedelta(seconds=seconds),
                   attempts=i.attempts + 1, updated_at=now)
