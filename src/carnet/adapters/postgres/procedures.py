"""``TeamProcedures`` on PostgreSQL (table ``carnet.team_procedures``, migration 0004); the SQLite
adapter (``adapters/sqlite/procedures.py``) is the reference it matches, in the same contract tests."""

from __future__ import annotations

import builtins
import json
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any

from carnet.adapters.postgres.pool import Connection, Pool, store_connection, utc
from carnet.domain.procedures import ProcedureStatus, TeamProcedure, dedup_key

_COLUMNS = ("id, tenant, text, status, proposed_by, created_at, updated_at, agent_id, queue, applies_when, decided_by,"
            " origin")
_LIVE = "status IN ('proposed', 'approved')"


def _procedure(r: Sequence[Any]) -> TeamProcedure:
    return TeamProcedure(id=r[0], tenant=r[1], text=r[2], status=ProcedureStatus(r[3]), proposed_by=r[4],
                         created_at=utc(r[5]), updated_at=utc(r[6]), agent_id=r[7], queue=r[8],
                         applies_when=tuple(json.loads(r[9])), decided_by=r[10], origin=r[11])



class PostgresTeamProcedures:
    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    def _tx(self, *, transaction: bool = True) -> AbstractContextManager[Connection]:
        return store_connection(self._pool, "the team procedures", transaction=transaction)

    def add(self, procedure: TeamProcedure) -> TeamProcedure:
        """``INSERT … ON CONFLICT (tenant, dedup_key) WHERE live DO NOTHING``, then the stored row."""
        p = procedure
        with self._tx() as db:
            db.execute(
                "INSERT INTO carnet.team_procedures (id, tenant, text, dedup_key, status, agent_id, queue,"
                " applies_when, proposed_by, decided_by, created_at, updated_at, origin)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                f" ON CONFLICT (tenant, dedup_key) WHERE {_LIVE} DO NOTHING",
                (p.id, p.tenant, p.text, dedup_key(p.text), p.status.value, p.agent_id, p.queue,
                 json.dumps(list(p.applies_when)), p.proposed_by, p.decided_by, utc(p.created_at),
                 utc(p.updated_at), p.origin))
            if p.origin is None:  # a person's proposal adopts a live derived one with the same text
                db.execute(f"UPDATE carnet.team_procedures SET origin = NULL WHERE tenant = %s AND dedup_key = %s"
                           f" AND {_LIVE}", (p.tenant, dedup_key(p.text)))
            row = db.execute(f"SELECT {_COLUMNS} FROM carnet.team_procedures WHERE tenant = %s AND dedup_key = %s"
                             f" AND {_LIVE}", (p.tenant, dedup_key(p.text))).fetchone()
        return p if row is None else _procedure(row)

    def get(self, tenant: str, procedure_id: str) -> TeamProcedure | None:
        with self._tx(transaction=False) as db:
            row = db.execute(f"SELECT {_COLUMNS} FROM carnet.team_procedures WHERE tenant = %s AND id = %s",
                             (tenant, procedure_id)).fetchone()
        return None if row is None else _procedure(row)

    def list(self, tenant: str, *, status: ProcedureStatus | None = None, limit: int = 200) -> list[TeamProcedure]:
        with self._tx(transaction=False) as db:
            rows = db.execute(f"SELECT {_COLUMNS} FROM carnet.team_procedures WHERE tenant = %s"
                              " AND (%s::text IS NULL OR status = %s) ORDER BY seq LIMIT %s",
                              (tenant, None if status is None else status.value,
                               None if status is None else status.value, limit)).fetchall()
        return [_procedure(r) for r in rows]

    def decide(self, tenant: str, procedure_id: str, *, expected: ProcedureStatus, status: ProcedureStatus,
               decided_by: str, at: datetime) -> TeamProcedure | None:
        with self._tx() as db:
            row = db.execute(f"UPDATE carnet.team_procedures SET status = %s, decided_by = %s, updated_at = %s"
                             f" WHERE tenant = %s AND id = %s AND status = %s RETURNING {_COLUMNS}",
                             (status.value, decided_by, utc(at), tenant, procedure_id, expected.value)).fetchone()
        return None if row is None else _procedure(row)

    def forget_origin(self, tenant: str, origin: str) -> builtins.list[str]:
        """``DELETE … WHERE tenant = %s AND origin = %s RETURNING id`` (migration 0005)."""
        with self._tx() as db:
            rows = db.execute("DELETE FROM carnet.team_procedures WHERE tenant = %s AND origin = %s RETURNING id",
                              (tenant, origin)).fetchall()
        return [str(r[0]) for r in rows]

    def move_origin(self, tenant: str, old: str, new: str) -> int:
        with self._tx() as db:
            return db.execute("UPDATE carnet.team_procedures SET origin = %s WHERE tenant = %s AND origin = %s",
                              (new, tenant, old)).rowcount

    def close(self) -> None:
        self._pool.close()
