"""``Catalog`` on PostgreSQL (schema ``carnet``): API keys, record history (metadata only, never
text), aliases, the subject registry, pseudonym maps, hash-key entries and subject retention.

It answers exactly as ``SqliteCatalog`` does (the contract tests run both). Backups are PostgreSQL's
own (``pg_dump --schema=carnet``, docs/backup.md), so there is no ``snapshot``. The pseudonym map's
compare-and-set is one ``UPDATE … WHERE version = %s``: a concurrent writer waits for the row lock,
then sees the new version and matches nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import psycopg

from carnet.adapters.postgres.pool import Connection, Pool, connection, utc
from carnet.domain.records import HistoryEntry, Scope
from carnet.domain.retention import SubjectRetention
from carnet.errors import Conflict, DependencyUnavailable
from carnet.ports import ApiKeyRecord, RegisteredSubject, SealedCorrection

_SUBJECT_TABLES = ("history", "aliases", "subjects", "pseudonyms", "subject_retention", "corrections")
_KEY_COLUMNS = "key_id, tenant, roles, created_at, revoked, rate_limit, name"


def _utc(at: datetime | None) -> datetime | None:
    return None if at is None else utc(at)


def _api_key(r: Sequence[Any]) -> ApiKeyRecord:
    return ApiKeyRecord(key_id=r[0], tenant=r[1], roles=tuple(json.loads(r[2])), created_at=utc(r[3]),
                        revoked=bool(r[4]), rate_limit=r[5], name=r[6])


def _unavailable() -> DependencyUnavailable:
    return DependencyUnavailable("catalog unavailable")


class PostgresCatalog:
    """``Catalog`` over a pool of connections; several nodes share one database."""

    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    @contextmanager
    def _conn(self, *, transaction: bool = False) -> Iterator[Connection]:
        with connection(self._pool, _unavailable, transaction=transaction) as conn:
            yield conn

    def add_api_key(self, *, key_id: str, key_hash: str, tenant: str, roles: Sequence[str],
                    rate_limit: str | None = None, name: str | None = None) -> ApiKeyRecord:
        """``INSERT INTO carnet.api_keys``; a taken id (or hash) is a ``Conflict``."""
        now = datetime.now(UTC)
        try:
            with self._conn() as db:
                db.execute("INSERT INTO carnet.api_keys (key_id, key_hash, tenant, roles, created_at, rate_limit,"
                           " name) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                           (key_id, key_hash, tenant, json.dumps(list(roles)), now, rate_limit, name))
        except psycopg.errors.UniqueViolation as exc:
            raise Conflict("an API key with this id already exists") from exc
        return ApiKeyRecord(key_id=key_id, tenant=tenant, roles=tuple(roles), created_at=now,
                            rate_limit=rate_limit, name=name)

    def find_api_key(self, key_hash: str) -> ApiKeyRecord | None:
        with self._conn() as db:
            row = db.execute(f"SELECT {_KEY_COLUMNS} FROM carnet.api_keys WHERE key_hash = %s",
                             (key_hash,)).fetchone()
        return None if row is None else _api_key(row)

    def api_keys_version(self) -> None:
        """None: several nodes share the database and nothing local tells that another revoked a key
        without a round trip, so every request looks its key up."""
        return None

    def api_keys(self, tenant: str | None = None) -> list[ApiKeyRecord]:
        with self._conn() as db:
            rows = db.execute(f"SELECT {_KEY_COLUMNS} FROM carnet.api_keys"
                              " WHERE %(t)s::text IS NULL OR tenant = %(t)s ORDER BY created_at, key_id",
                              {"t": tenant}).fetchall()
        return [_api_key(r) for r in rows]

    def revoke_api_key(self, key_id: str, *, tenant: str | None = None) -> bool:
        with self._conn() as db:
            cur = db.execute("UPDATE carnet.api_keys SET revoked = true"
                             " WHERE key_id = %(k)s AND (%(t)s::text IS NULL OR tenant = %(t)s)",
                             {"k": key_id, "t": tenant})
        return cur.rowcount == 1

    def append_history(self, scope: Scope, entries: Sequence[HistoryEntry]) -> None:
        rows = [(scope.tenant, scope.subject, e.memory_id, utc(e.at), e.action, e.actor, json.dumps(e.detail))
                for e in entries]
        if rows:
            with self._conn() as db, db.cursor() as cur:
                cur.executemany("INSERT INTO carnet.history (tenant, subject, memory_id, at, action, actor, detail)"
                                " VALUES (%s, %s, %s, %s, %s, %s, %s)", rows)

    def history(self, scope: Scope, memory_id: str) -> list[HistoryEntry]:
        with self._conn() as db:
            rows = db.execute("SELECT memory_id, at, action, actor, detail FROM carnet.history"
                              " WHERE tenant = %s AND subject = %s AND memory_id = %s ORDER BY seq",
                              (scope.tenant, scope.subject, memory_id)).fetchall()
        return [HistoryEntry(memory_id=r[0], at=utc(r[1]), action=r[2], actor=r[3],
                             detail=json.loads(r[4])) for r in rows]

    def add_aliases(self, scope: Scope, aliases: dict[str, str]) -> None:
        rows = [(scope.tenant, scope.subject, a, t) for a, t in aliases.items()]
        if rows:
            with self._conn() as db, db.cursor() as cur:
                cur.executemany("INSERT INTO carnet.aliases (tenant, subject, alias_id, memory_id)"
                                " VALUES (%s, %s, %s, %s) ON CONFLICT (tenant, subject, alias_id)"
                                " DO UPDATE SET memory_id = excluded.memory_id", rows)

    def resolve_aliases(self, scope: Scope, ids: Sequence[str]) -> dict[str, str]:
        if not ids:
            return {}
        with self._conn() as db:
            rows = db.execute("SELECT alias_id, memory_id FROM carnet.aliases WHERE tenant = %s AND subject = %s"
                              " AND alias_id = ANY(%s)", (scope.tenant, scope.subject, list(ids))).fetchall()
        return {r[0]: r[1] for r in rows}

    def erase_subject(self, scope: Scope) -> int:
        """One transaction over the six tables that name the subject."""
        gone = 0
        with self._conn(transaction=True) as db:
            for table in _SUBJECT_TABLES:
                cur = db.execute(f"DELETE FROM carnet.{table} WHERE tenant = %s AND subject = %s",
                                 (scope.tenant, scope.subject))
                gone += cur.rowcount
        return gone

    def register_subject(self, scope: Scope, *, hash_key: str, sealed_id: bytes) -> bool:
        with self._conn() as db:
            cur = db.execute("INSERT INTO carnet.subjects (tenant, subject, hash_key, sealed_id)"
                             " VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                             (scope.tenant, scope.subject, hash_key, sealed_id))
        return cur.rowcount == 1

    def is_registered(self, scope: Scope) -> bool:
        with self._conn() as db:
            row = db.execute("SELECT 1 FROM carnet.subjects WHERE tenant = %s AND subject = %s",
                             (scope.tenant, scope.subject)).fetchone()
        return row is not None

    def registered_subjects(self, tenant: str) -> list[RegisteredSubject]:
        with self._conn() as db:
            rows = db.execute("SELECT subject, hash_key, sealed_id FROM carnet.subjects WHERE tenant = %s"
                              " ORDER BY subject", (tenant,)).fetchall()
        return [RegisteredSubject(Scope(tenant, r[0]), r[1], bytes(r[2])) for r in rows]

    def registered_tenants(self) -> list[str]:
        with self._conn() as db:
            rows = db.execute("SELECT DISTINCT tenant FROM carnet.subjects ORDER BY tenant").fetchall()
        return [r[0] for r in rows]

    def subject_retention(self, scope: Scope) -> SubjectRetention:
        with self._conn() as db:
            row = db.execute("SELECT legal_hold, hold_since, hold_reference, relationship_end"
                             " FROM carnet.subject_retention WHERE tenant = %s AND subject = %s",
                             (scope.tenant, scope.subject)).fetchone()
        if row is None:
            return SubjectRetention()
        return SubjectRetention(legal_hold=bool(row[0]), hold_since=_utc(row[1]), hold_reference=row[2],
                                relationship_end=_utc(row[3]))

    def set_legal_hold(self, scope: Scope, *, held: bool, at: datetime, reference: str | None = None) -> None:
        """One upsert of the hold columns; the relationship end is left as it is."""
        since, ref = (utc(at), reference) if held else (None, None)
        with self._conn() as db:
            db.execute("INSERT INTO carnet.subject_retention (tenant, subject, legal_hold, hold_since, hold_reference)"
                       " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (tenant, subject) DO UPDATE SET"
                       " legal_hold = excluded.legal_hold, hold_since = excluded.hold_since,"
                       " hold_reference = excluded.hold_reference",
                       (scope.tenant, scope.subject, held, since, ref))

    def set_relationship_end(self, scope: Scope, ended_at: datetime | None) -> None:
        """One upsert of the relationship end; the hold is left as it is."""
        with self._conn() as db:
            db.execute("INSERT INTO carnet.subject_retention (tenant, subject, relationship_end) VALUES (%s, %s, %s)"
                       " ON CONFLICT (tenant, subject) DO UPDATE SET relationship_end = excluded.relationship_end",
                       (scope.tenant, scope.subject, _utc(ended_at)))

    def move_subject(self, old: Scope, new: Scope, *, hash_key: str, sealed_id: bytes,
                     sealed_map: bytes | None = None) -> None:
        """One transaction: the subject's rows take the new hash, its registry row is replaced."""
        if old.tenant != new.tenant:
            raise ValueError("a subject moves within its tenant")
        with self._conn(transaction=True) as db:
            if sealed_map is not None:
                db.execute("UPDATE carnet.pseudonyms SET sealed_map = %s WHERE tenant = %s AND subject = %s",
                           (sealed_map, old.tenant, old.subject))
            for table in ("history", "aliases", "pseudonyms", "subject_retention", "corrections"):
                db.execute(f"UPDATE carnet.{table} SET subject = %s WHERE tenant = %s AND subject = %s",
                           (new.subject, old.tenant, old.subject))
            db.execute("DELETE FROM carnet.subjects WHERE tenant = %s AND subject = %s", (old.tenant, old.subject))
            db.execute("INSERT INTO carnet.subjects (tenant, subject, hash_key, sealed_id) VALUES (%s, %s, %s, %s)"
                       " ON CONFLICT (tenant, subject) DO UPDATE SET hash_key = excluded.hash_key,"
                       " sealed_id = excluded.sealed_id", (new.tenant, new.subject, hash_key, sealed_id))

    def hash_key_entry(self, tenant: str) -> str | None:
        with self._conn() as db:
            row = db.execute("SELECT entry FROM carnet.tenant_hash_keys WHERE tenant = %s", (tenant,)).fetchone()
        return None if row is None else str(row[0])

    def tenants(self) -> list[str]:
        with self._conn() as db:
            rows = db.execute("SELECT tenant FROM carnet.subjects UNION SELECT tenant FROM carnet.tenant_hash_keys"
                              " ORDER BY tenant").fetchall()
        return [r[0] for r in rows]

    def set_hash_key_entry(self, tenant: str, entry: str) -> None:
        with self._conn() as db:
            db.execute("INSERT INTO carnet.tenant_hash_keys (tenant, entry) VALUES (%s, %s)"
                       " ON CONFLICT (tenant) DO UPDATE SET entry = excluded.entry", (tenant, entry))

    def pseudonym_map(self, scope: Scope) -> tuple[bytes, int] | None:
        with self._conn() as db:
            row = db.execute("SELECT sealed_map, version FROM carnet.pseudonyms WHERE tenant = %s AND subject = %s",
                             (scope.tenant, scope.subject)).fetchone()
        return None if row is None else (bytes(row[0]), int(row[1]))

    def put_pseudonym_map(self, scope: Scope, sealed: bytes, *, version: int) -> bool:
        """Version 0: insert unless a map exists; else ``UPDATE … WHERE version = %s`` (compare-and-set)."""
        with self._conn() as db:
            if version == 0:
                cur = db.execute("INSERT INTO carnet.pseudonyms (tenant, subject, version, sealed_map)"
                                 " VALUES (%s, %s, 1, %s) ON CONFLICT DO NOTHING",
                                 (scope.tenant, scope.subject, sealed))
            else:
                cur = db.execute("UPDATE carnet.pseudonyms SET sealed_map = %s, version = version + 1"
                                 " WHERE tenant = %s AND subject = %s AND version = %s",
                                 (sealed, scope.tenant, scope.subject, version))
        return cur.rowcount == 1

    def add_correction(self, scope: Scope, *, correction_id: str, at: datetime, sealed: bytes) -> None:
        """``INSERT INTO carnet.corrections … ON CONFLICT DO UPDATE`` (a restore retried replaces its row)."""
        with self._conn() as db:
            db.execute("INSERT INTO carnet.corrections (tenant, subject, id, at, sealed) VALUES (%s, %s, %s, %s, %s)"
                       " ON CONFLICT (tenant, subject, id) DO UPDATE SET at = excluded.at, sealed = excluded.sealed",
                       (scope.tenant, scope.subject, correction_id, utc(at), sealed))

    def corrections(self, tenant: str) -> list[SealedCorrection]:
        with self._conn() as db:
            rows = db.execute("SELECT subject, id, at, sealed FROM carnet.corrections WHERE tenant = %s"
                              " ORDER BY at, id", (tenant,)).fetchall()
        return [SealedCorrection(Scope(tenant, r[0]), r[1], utc(r[2]), bytes(r[3])) for r in rows]

    def subject_corrections(self, scope: Scope) -> int:
        with self._conn() as db:
            row = db.execute("SELECT count(*) FROM carnet.corrections WHERE tenant = %s AND subject = %s",
                             (scope.tenant, scope.subject)).fetchone()
        return 0 if row is None else int(row[0])

    def check(self) -> None:
        with self._conn() as db:
            db.execute("SELECT 1").fetchone()

    def close(self) -> None:
        self._pool.close()
