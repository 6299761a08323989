"""``IntakeStore`` on PostgreSQL: the durable intake queue shared by the ``carnet worker`` processes of
several nodes (table ``carnet.intakes``; ``SqliteIntakeStore`` is the reference it matches).

Why ``FOR UPDATE SKIP LOCKED`` alone is not enough: it keeps two workers off the same *row*, but
"a subject's intakes one at a time, oldest first" is a rule over several rows. Two workers could
each see a different row of one subject as leasable (one just leased and not yet committed, or a
dead intake retried behind a running one) and both take it. So every decision about a subject is
made under that subject's transaction-scoped advisory lock:

1. candidates: the oldest unfinished intake of each subject, if due (pending and ``next_attempt_at``
   reached, or processing with an expired lease), oldest first, ``FOR UPDATE SKIP LOCKED`` (workers
   spread over different rows instead of queueing on the same ones);
2. per candidate, ``pg_try_advisory_xact_lock(subject)``: held by another worker's lease or add →
   skip the subject, never wait;
3. ``UPDATE … WHERE id = candidate`` re-checks, on a snapshot taken after the lock, that it is still
   due, still the subject's oldest unfinished intake, and that no other intake of the subject holds
   a live lease; then leases it (attempts + 1) and returns it.

The candidate row is already locked by step 1, so a lease never waits on anything: it cannot deadlock.
``add`` takes the same advisory lock (waiting for it): a subject's intakes get their ``seq`` in commit
order, so no older intake can appear after a newer one was leased."""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from carnet.adapters.postgres.pool import DURABLE, Connection, Pool, store_connection, utc
from carnet.domain.intake import Intake, IntakeStatus, QueueStats

# pg_advisory_xact_lock(int4, int4) keyspace of "a subject of the intake queue" ("CRNT").
_SUBJECT_LOCKS = 0x43524E54
_SUBJECT_KEY = "hashtext(%(tenant)s || chr(31) || %(subject)s)"
_COLUMNS = ("id, tenant, subject, status, created_at, updated_at, session_id, idempotency_key, attempts, reason, "
            "memory_ids, next_attempt_at, lease_owner, lease_until, actor, sealed, request_fingerprint, session_key,"
            " context_until")
_DUE = ("((i.status = 'pending' AND i.next_attempt_at <= %(now)s)"
        " OR (i.status = 'processing' AND i.lease_until < %(now)s))")
_OLDEST = ("NOT EXISTS (SELECT 1 FROM carnet.intakes o WHERE o.tenant = i.tenant AND o.subject = i.subject"
           " AND o.status IN ('pending', 'processing') AND o.seq < i.seq)")
_CANDIDATES = (f"SELECT i.id, i.tenant, i.subject FROM carnet.intakes i WHERE {_DUE} AND {_OLDEST}"
               " ORDER BY i.seq LIMIT %(window)s FOR UPDATE OF i SKIP LOCKED")
_TAKE = ("UPDATE carnet.intakes i SET status = 'processing', lease_owner = %(owner)s, lease_until = %(until)s,"
         f" attempts = i.attempts + 1, updated_at = %(now)s WHERE i.id = %(id)s AND {_DUE} AND {_OLDEST}"
         " AND NOT EXISTS (SELECT 1 FROM carnet.intakes p WHERE p.tenant = i.tenant AND p.subject = i.subject"
         "   AND p.id <> i.id AND p.status = 'processing' AND p.lease_until >= %(now)s)"
         f" RETURNING {', '.join('i.' + c for c in _COLUMNS.split(', '))}")


def _opt(at: datetime | None) -> datetime | None:
    return None if at is None else utc(at)


def _intake(r: Sequence[Any]) -> Intake:
    return Intake(
        id=r[0], tenant=r[1], subject=r[2], status=IntakeStatus(r[3]), created_at=utc(r[4]), updated_at=utc(r[5]),
        session_id=r[6], idempotency_key=r[7], attempts=int(r[8]), reason=r[9], memory_ids=tuple(json.loads(r[10])),
        next_attempt_at=_opt(r[11]), lease_owner=r[12], lease_until=_opt(r[13]), actor=r[14], sealed=bytes(r[15]),
        fingerprint=r[16], session_key=r[17], context_until=_opt(r[18]),
    )



class PostgresIntakeStore:
    """``IntakeStore`` over a pool of connections; any number of workers on any number of nodes."""

    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    def _tx(self, *, transaction: bool = True) -> AbstractContextManager[Connection]:
        return store_connection(self._pool, "the intake queue", transaction=transaction)

    def add(self, intake: Intake) -> Intake:
        """Under the subject's advisory lock: the stored intake for a used idempotency key, else INSERT."""
        key = {"tenant": intake.tenant, "subject": intake.subject}
        with self._tx() as db:
            db.execute(DURABLE)  # an acknowledged intake survives a power cut
            db.execute(f"SELECT pg_advisory_xact_lock({_SUBJECT_LOCKS}, {_SUBJECT_KEY})", key)
            if intake.idempotency_key is not None:
                row = db.execute(f"SELECT {_COLUMNS} FROM carnet.intakes WHERE tenant = %s AND subject = %s"
                                 " AND idempotency_key = %s",
                                 (intake.tenant, intake.subject, intake.idempotency_key)).fetchone()
                if row is not None:
                    return _intake(row)
            created = utc(intake.created_at)
            db.execute("INSERT INTO carnet.intakes (id, tenant, subject, session_id, idempotency_key, actor, status,"
                       " attempts, created_at, updated_at, next_attempt_at, sealed, request_fingerprint, session_key)"
                       " VALUES (%s, %s, %s, %s, %s, %s, 'pending', 0, %s, %s, %s, %s, %s, %s)",
                       (intake.id, intake.tenant, intake.subject, intake.session_id, intake.idempotency_key,
                        intake.actor, created, created, created, intake.sealed, intake.fingerprint,
                        intake.session_key))
        return intake

    def get(self, tenant: str, intake_id: str) -> Intake | None:
        with self._tx(transaction=False) as db:
            row = db.execute(f"SELECT {_COLUMNS} FROM carnet.intakes WHERE id = %s AND tenant = %s",
                             (intake_id, tenant)).fetchone()
        return None if row is None else _intake(row)

    def lease(self, *, owner: str, now: datetime, seconds: float, limit: int = 1) -> list[Intake]:
        """See the module's docstring: candidates ``FOR UPDATE SKIP LOCKED``, then per subject
        ``pg_try_advisory_xact_lock`` and a re-checking ``UPDATE … RETURNING``."""
        at = utc(now)
        params: dict[str, object] = {"now": at, "until": at + timedelta(seconds=seconds), "owner": owner}
        taken: list[Intake] = []
        with self._tx() as db:
            candidates = db.execute(_CANDIDATES, {"now": at, "window": max(4 * limit, 16)}).fetchall()
            subjects: set[tuple[str, str]] = set()
            for intake_id, tenant, subject in candidates:
                if len(taken) == limit:
                    break
                if (tenant, subject) in subjects or not self._try_subject(db, tenant, subject):
                    continue
                row = db.execute(_TAKE, {**params, "id": intake_id}).fetchone()
                if row is not None:
                    subjects.add((tenant, subject))
                    taken.append(_intake(row))
        return taken

    @staticmethod
    def _try_subject(db: Connection, tenant: str, subject: str) -> bool:
        row = db.execute(f"SELECT pg_try_advisory_xact_lock({_SUBJECT_LOCKS}, {_SUBJECT_KEY})",
                         {"tenant": tenant, "subject": subject}).fetchone()
        return row is not None and bool(row[0])

    def renew(self, intake_id: str, *, owner: str, until: datetime) -> bool:
        with self._tx() as db:
            cur = db.execute("UPDATE carnet.intakes SET lease_until = %s WHERE id = %s AND lease_owner = %s"
                             " AND status = 'processing'", (utc(until), intake_id, owner))
        return cur.rowcount == 1

    def stage(self, intake_id: str, *, owner: str, sealed: bytes) -> bool:
        """Replace the sealed payload (e.g. with the staged extraction) while ``owner`` holds the lease."""
        with self._tx() as db:
            db.execute(DURABLE)  # a staged extraction survives a power cut
            cur = db.execute("UPDATE carnet.intakes SET sealed = %s WHERE id = %s AND lease_owner = %s"
                             " AND status = 'processing'", (sealed, intake_id, owner))
        return cur.rowcount == 1

    def complete(self, intake_id: str, *, owner: str, memory_ids: Sequence[str], now: datetime,
                 keep_until: datetime | None = None) -> bool:
        """Done, and the sealed messages dropped (the memories hold what was worth keeping), or kept until
        ``keep_until`` as the session's context."""
        with self._tx() as db:
            cur = db.execute("UPDATE carnet.intakes SET status = 'done', memory_ids = %(ids)s, reason = NULL,"
                             " lease_owner = NULL, lease_until = NULL, updated_at = %(now)s, context_until = %(keep)s,"
                             " sealed = CASE WHEN %(keep)s::timestamptz IS NULL THEN ''::bytea ELSE sealed END"
                             " WHERE id = %(id)s AND lease_owner = %(owner)s AND status = 'processing'",
                             {"ids": json.dumps(list(memory_ids)), "now": utc(now), "keep": _opt(keep_until),
                              "id": intake_id, "owner": owner})
        return cur.rowcount == 1

    def session_context(self, tenant: str, subject: str, session_key: str, *, now: datetime) -> list[Intake]:
        with self._tx(transaction=False) as db:
            rows = db.execute(f"SELECT {_COLUMNS} FROM carnet.intakes WHERE tenant = %s AND subject = %s"
                              " AND session_key = %s AND status = 'done' AND context_until > %s ORDER BY seq",
                              (tenant, subject, session_key, utc(now))).fetchall()
        return [_intake(r) for r in rows]

    def expire_context(self, now: datetime) -> int:
        with self._tx() as db:
            cur = db.execute("UPDATE carnet.intakes SET sealed = ''::bytea, context_until = NULL"
                             " WHERE context_until IS NOT NULL AND context_until <= %s", (utc(now),))
        return cur.rowcount

    def fail(self, intake_id: str, *, owner: str, reason: str, now: datetime, retry_at: datetime | None,
             counted: bool = True) -> bool:
        status = IntakeStatus.PENDING if retry_at is not None else IntakeStatus.DEAD
        with self._tx() as db:
            cur = db.execute("UPDATE carnet.intakes SET status = %s, reason = %s, next_attempt_at = %s,"
                             " lease_owner = NULL, lease_until = NULL, updated_at = %s,"
                             " attempts = greatest(0, attempts - %s)"
                             " WHERE id = %s AND lease_owner = %s AND status = 'processing'",
                             (status.value, reason, _opt(retry_at), utc(now), 0 if counted else 1, intake_id, owner))
        return cur.rowcount == 1

    def retry_dead(self, *, tenant: str | None = None, intake_id: str | None = None, now: datetime) -> int:
        with self._tx() as db:
            cur = db.execute("UPDATE carnet.intakes SET status = 'pending', attempts = 0, next_attempt_at = %(now)s,"
                             " updated_at = %(now)s WHERE status = 'dead' AND (%(tenant)s::text IS NULL OR"
                             " tenant = %(tenant)s) AND (%(id)s::text IS NULL OR id = %(id)s)",
                             {"now": utc(now), "tenant": tenant, "id": intake_id})
        return cur.rowcount

    def stats(self, tenant: str | None = None) -> QueueStats:
        mine = {"tenant": tenant}
        with self._tx() as db:
            rows = db.execute("SELECT status, count(*) FROM carnet.intakes WHERE status <> 'done'"
                              " AND (%(tenant)s::text IS NULL OR tenant = %(tenant)s) GROUP BY status", mine).fetchall()
            counts: dict[str, int] = dict(rows)
            oldest = db.execute("SELECT min(created_at) FROM carnet.intakes WHERE status = 'pending'"
                                " AND (%(tenant)s::text IS NULL OR tenant = %(tenant)s)", mine).fetchone()
        return QueueStats(pending=int(counts.get("pending", 0)), processing=int(counts.get("processing", 0)),
                          dead=int(counts.get("dead", 0)), oldest_pending_at=_opt(oldest[0] if oldest else None))

    def dead(self, tenant: str, *, limit: int = 100) -> list[Intake]:
        with self._tx(transaction=False) as db:
            rows = db.execute(f"SELECT {_COLUMNS} FROM carnet.intakes WHERE tenant = %s AND status = 'dead'"
                              " ORDER BY updated_at DESC, id DESC LIMIT %s", (tenant, limit)).fetchall()
        return [replace(_intake(r), sealed=b"") for r in rows]

    def forget_subject(self, tenant: str, subject: str) -> int:
        with self._tx() as db:
            cur = db.execute("DELETE FROM carnet.intakes WHERE tenant = %s AND subject = %s", (tenant, subject))
        return cur.rowcount

    def close(self) -> None:
        self._pool.close()
