"""Embedded control plane on SQLite: API keys, record history (metadata only, never text), and the
subject registry (keyed hashes with the subject ids sealed)."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from carnet.adapters.sqlite.db import immediate, open_db
from carnet.domain.records import HistoryEntry, Scope
from carnet.domain.retention import SubjectRetention
from carnet.errors import Conflict, DependencyUnavailable
from carnet.ports import ApiKeyRecord, RegisteredSubject, SealedCorrection
from carnet.private_fs import private_file

_SCHEMA = """
CREATE TABLE IF NOT EXISTS api_keys (
    key_id TEXT PRIMARY KEY,
    key_hash TEXT NOT NULL UNIQUE,
    tenant TEXT NOT NULL,
    roles TEXT NOT NULL,
    created_at REAL NOT NULL,
    revoked INTEGER NOT NULL DEFAULT 0,
    rate_limit TEXT,
    name TEXT
);
CREATE TABLE IF NOT EXISTS history (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant TEXT NOT NULL,
    subject TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    at REAL NOT NULL,
    action TEXT NOT NULL,
    actor TEXT NOT NULL,
    detail TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS aliases (
    tenant TEXT NOT NULL,
    subject TEXT NOT NULL,
    alias_id TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    PRIMARY KEY (tenant, subject, alias_id)
);
CREATE INDEX IF NOT EXISTS history_by_memory ON history (tenant, subject, memory_id, seq);
CREATE TABLE IF NOT EXISTS subjects (
    tenant TEXT NOT NULL,
    subject TEXT NOT NULL,
    hash_key TEXT NOT NULL,
    sealed_id BLOB NOT NULL,
    PRIMARY KEY (tenant, subject)
);
CREATE TABLE IF NOT EXISTS pseudonyms (
    tenant TEXT NOT NULL,
    subject TEXT NOT NULL,
    version INTEGER NOT NULL,
    sealed_map BLOB NOT NULL,
    PRIMARY KEY (tenant, subject)
);
CREATE TABLE IF NOT EXISTS tenant_hash_keys (
    tenant TEXT PRIMARY KEY,
    entry TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS corrections (
    tenant TEXT NOT NULL,
    subject TEXT NOT NULL,
    id TEXT NOT NULL,
    at REAL NOT NULL,
    sealed BLOB NOT NULL,
    PRIMARY KEY (tenant, subject, id)
);
CREATE INDEX IF NOT EXISTS corrections_by_tenant ON corrections (tenant, at, id);
CREATE TABLE IF NOT EXISTS subject_retention (
    tenant TEXT NOT NULL,
    subject TEXT NOT NULL,
    legal_hold INTEGER NOT NULL DEFAULT 0,
    hold_since REAL,
    hold_reference TEXT,
    relationship_end REAL,
    PRIMARY KEY (tenant, subject)
);
"""


_SUBJECT_TABLES = ("history", "aliases", "subjects", "pseudonyms", "subject_retention", "corrections")


_KEY_COLUMNS = "key_id, tenant, roles, created_at, revoked, rate_limit, name"


def _api_key(row: Sequence[object]) -> ApiKeyRecord:
    return ApiKeyRecord(key_id=str(row[0]), tenant=str(row[1]), roles=tuple(json.loads(str(row[2]))),
                        created_at=_dt(float(str(row[3]))), revoked=bool(row[4]),
                        rate_limit=None if row[5] is None else str(row[5]),
                        name=None if row[6] is None else str(row[6]))


def _add_missing_columns(db: sqlite3.Connection, table: str, columns: dict[str, str]) -> None:
    """Catalogs created by an older Carnet gain the new columns (SQLite has no ADD COLUMN IF NOT EXISTS)."""
    have = {str(r[1]) for r in db.execute(f"PRAGMA table_info({table})").fetchall()}
    for name, kind in columns.items():
        if name not in have:
            db.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")


def _ts(at: datetime) -> float:
    return at.timestamp()


def _dt(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, tz=UTC)


class SqliteCatalog:
    """``Catalog`` on one SQLite file (WAL). Safe to open from several processes (``apikey create``
    runs while ``serve`` holds the vector store)."""

    def __init__(self, path: Path) -> None:
        self._db = open_db(path, schema=_SCHEMA, synchronous="NORMAL")
        self._lock = threading.Lock()
        self._key_writes = 0  # this connection's writes to api_keys: SQLite's data_version does not count them
        _add_missing_columns(self._db, "api_keys", {"rate_limit": "TEXT", "name": "TEXT"})

    def add_api_key(self, *, key_id: str, key_hash: str, tenant: str, roles: Sequence[str],
                    rate_limit: str | None = None, name: str | None = None) -> ApiKeyRecord:
        now = datetime.now(UTC)
        try:
            with self._lock:
                self._db.execute(
                    "INSERT INTO api_keys (key_id, key_hash, tenant, roles, created_at, rate_limit, name)"
                    " VALUES (?,?,?,?,?,?,?)",
                    (key_id, key_hash, tenant, json.dumps(list(roles)), _ts(now), rate_limit, name),
                )
                self._key_writes += 1
        except sqlite3.IntegrityError as exc:
            raise Conflict("an API key with this id already exists") from exc
        return ApiKeyRecord(key_id=key_id, tenant=tenant, roles=tuple(roles), created_at=now,
                            rate_limit=rate_limit, name=name)

    def find_api_key(self, key_hash: str) -> ApiKeyRecord | None:
        with self._lock:
            row = self._db.execute(f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE key_hash = ?",
                                   (key_hash,)).fetchone()
        return None if row is None else _api_key(row)

    def api_keys_version(self) -> tuple[int, int] | None:
        """SQLite's ``data_version`` (it changes when another connection, in this process or another,
        commits to the file: ``carnet apikey revoke`` beside the server) with this connection's own key
        writes; ``None`` when another thread holds the connection (the caller looks the key up instead
        of waiting): the gate reads it on the event loop. Normally a read of the WAL index in shared
        memory, microseconds (measured in docs/benchmarks.md, "The sequential gap, decomposed")."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            row = self._db.execute("PRAGMA data_version").fetchone()
            return int(row[0]), self._key_writes
        finally:
            self._lock.release()

    def api_keys(self, tenant: str | None = None) -> list[ApiKeyRecord]:
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE ? IS NULL OR tenant = ? ORDER BY created_at, key_id",
                (tenant, tenant)).fetchall()
        return [_api_key(r) for r in rows]

    def revoke_api_key(self, key_id: str, *, tenant: str | None = None) -> bool:
        with self._lock:
            cur = self._db.execute("UPDATE api_keys SET revoked = 1 WHERE key_id = ? AND (? IS NULL OR tenant = ?)",
                                   (key_id, tenant, tenant))
            self._key_writes += 1
        return cur.rowcount == 1

    def append_history(self, scope: Scope, entries: Sequence[HistoryEntry]) -> None:
        rows = [
            (scope.tenant, scope.subject, e.memory_id, _ts(e.at), e.action, e.actor, json.dumps(e.detail))
            for e in entries
        ]
        with self._lock:
            self._db.executemany(
                "INSERT INTO history (tenant, subject, memory_id, at, action, actor, detail)"
                " VALUES (?,?,?,?,?,?,?)",
                rows,
            )

    def history(self, scope: Scope, memory_id: str) -> list[HistoryEntry]:
        with self._lock:
            rows = self._db.execute(
                "SELECT memory_id, at, action, actor, detail FROM history"
                " WHERE tenant = ? AND subject = ? AND memory_id = ? ORDER BY seq",
                (scope.tenant, scope.subject, memory_id),
            ).fetchall()
        return [
            HistoryEntry(memory_id=r[0], at=_dt(r[1]), action=r[2], actor=r[3], detail=json.loads(r[4]))
            for r in rows
        ]

    def add_aliases(self, scope: Scope, aliases: dict[str, str]) -> None:
        rows = [(scope.tenant, scope.subject, a, t) for a, t in aliases.items()]
        with self._lock:
            self._db.executemany(
                "INSERT OR REPLACE INTO aliases (tenant, subject, alias_id, memory_id) VALUES (?,?,?,?)", rows
            )

    def resolve_aliases(self, scope: Scope, ids: Sequence[str]) -> dict[str, str]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        with self._lock:
            rows = self._db.execute(
                f"SELECT alias_id, memory_id FROM aliases WHERE tenant = ? AND subject = ?"
                f" AND alias_id IN ({marks})",
                (scope.tenant, scope.subject, *ids),
            ).fetchall()
        return {r[0]: r[1] for r in rows}

    def erase_subject(self, scope: Scope) -> int:
        with self._transaction():
            gone = 0
            for table in _SUBJECT_TABLES:
                cur = self._db.execute(f"DELETE FROM {table} WHERE tenant = ? AND subject = ?",
                                       (scope.tenant, scope.subject))
                gone += cur.rowcount
        return gone

    def register_subject(self, scope: Scope, *, hash_key: str, sealed_id: bytes) -> bool:
        with self._lock:
            cur = self._db.execute(
                "INSERT OR IGNORE INTO subjects (tenant, subject, hash_key, sealed_id) VALUES (?,?,?,?)",
                (scope.tenant, scope.subject, hash_key, sealed_id),
            )
        return cur.rowcount == 1

    def is_registered(self, scope: Scope) -> bool:
        with self._lock:
            row = self._db.execute("SELECT 1 FROM subjects WHERE tenant = ? AND subject = ?",
                                   (scope.tenant, scope.subject)).fetchone()
        return row is not None

    def registered_subjects(self, tenant: str) -> list[RegisteredSubject]:
        with self._lock:
            rows = self._db.execute("SELECT subject, hash_key, sealed_id FROM subjects WHERE tenant = ?"
                                    " ORDER BY subject", (tenant,)).fetchall()
        return [RegisteredSubject(Scope(tenant, r[0]), r[1], bytes(r[2])) for r in rows]

    def registered_tenants(self) -> list[str]:
        with self._lock:
            rows = self._db.execute("SELECT DISTINCT tenant FROM subjects ORDER BY tenant").fetchall()
        return [str(r[0]) for r in rows]

    def subject_retention(self, scope: Scope) -> SubjectRetention:
        with self._lock:
            row = self._db.execute(
                "SELECT legal_hold, hold_since, hold_reference, relationship_end FROM subject_retention"
                " WHERE tenant = ? AND subject = ?", (scope.tenant, scope.subject)).fetchone()
        if row is None:
            return SubjectRetention()
        return SubjectRetention(legal_hold=bool(row[0]), hold_since=None if row[1] is None else _dt(row[1]),
                                hold_reference=row[2], relationship_end=None if row[3] is None else _dt(row[3]))

    def set_legal_hold(self, scope: Scope, *, held: bool, at: datetime, reference: str | None = None) -> None:
        """One upsert of the hold columns; the relationship end is left as it is."""
        since, ref = (_ts(at), reference) if held else (None, None)
        with self._lock:
            self._db.execute(
                "INSERT INTO subject_retention (tenant, subject, legal_hold, hold_since, hold_reference)"
                " VALUES (?,?,?,?,?) ON CONFLICT (tenant, subject) DO UPDATE SET legal_hold = excluded.legal_hold,"
                " hold_since = excluded.hold_since, hold_reference = excluded.hold_reference",
                (scope.tenant, scope.subject, int(held), since, ref))

    def set_relationship_end(self, scope: Scope, ended_at: datetime | None) -> None:
        """One upsert of the relationship end; the hold is left as it is."""
        with self._lock:
            self._db.execute(
                "INSERT INTO subject_retention (tenant, subject, relationship_end) VALUES (?,?,?)"
                " ON CONFLICT (tenant, subject) DO UPDATE SET relationship_end = excluded.relationship_end",
                (scope.tenant, scope.subject, None if ended_at is None else _ts(ended_at)))

    def move_subject(self, old: Scope, new: Scope, *, hash_key: str, sealed_id: bytes,
                     sealed_map: bytes | None = None) -> None:
        if old.tenant != new.tenant:
            raise ValueError("a subject moves within its tenant")
        with self._transaction():
            if sealed_map is not None:
                self._db.execute("UPDATE pseudonyms SET sealed_map = ? WHERE tenant = ? AND subject = ?",
                                 (sealed_map, old.tenant, old.subject))
            for table in ("history", "aliases", "pseudonyms", "subject_retention", "corrections"):
                self._db.execute(f"UPDATE {table} SET subject = ? WHERE tenant = ? AND subject = ?",
                                 (new.subject, old.tenant, old.subject))
            self._db.execute("DELETE FROM subjects WHERE tenant = ? AND subject = ?", (old.tenant, old.subject))
            self._db.execute("INSERT OR REPLACE INTO subjects (tenant, subject, hash_key, sealed_id) VALUES (?,?,?,?)",
                             (new.tenant, new.subject, hash_key, sealed_id))

    def hash_key_entry(self, tenant: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT entry FROM tenant_hash_keys WHERE tenant = ?", (tenant,)).fetchone()
        return None if row is None else str(row[0])

    def tenants(self) -> list[str]:
        with self._lock:
            rows = self._db.execute("SELECT tenant FROM subjects UNION SELECT tenant FROM tenant_hash_keys"
                                    " ORDER BY tenant").fetchall()
        return [str(r[0]) for r in rows]

    def snapshot(self, target: Path) -> None:
        """SQLite's online backup (``Connection.backup``) into the new file ``target``: one consistent
        copy, taken while other processes keep reading and writing the catalog."""
        copy = sqlite3.connect(private_file(target))
        try:
            with self._lock:
                self._db.backup(copy)
        except sqlite3.Error as exc:
            raise DependencyUnavailable(f"catalog backup failed: {exc}") from exc
        finally:
            copy.close()

    def set_hash_key_entry(self, tenant: str, entry: str) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO tenant_hash_keys (tenant, entry) VALUES (?,?)", (tenant, entry))

    def pseudonym_map(self, scope: Scope) -> tuple[bytes, int] | None:
        with self._lock:
            row = self._db.execute("SELECT sealed_map, version FROM pseudonyms WHERE tenant = ? AND subject = ?",
                                   (scope.tenant, scope.subject)).fetchone()
        return None if row is None else (bytes(row[0]), int(row[1]))

    def put_pseudonym_map(self, scope: Scope, sealed: bytes, *, version: int) -> bool:
        with self._lock:
            if version == 0:
                cur = self._db.execute("INSERT OR IGNORE INTO pseudonyms (tenant, subject, version, sealed_map)"
                                       " VALUES (?,?,1,?)", (scope.tenant, scope.subject, sealed))
            else:
                cur = self._db.execute("UPDATE pseudonyms SET sealed_map = ?, version = version + 1"
                                       " WHERE tenant = ? AND subject = ? AND version = ?",
                                       (sealed, scope.tenant, scope.subject, version))
        return cur.rowcount == 1

    def add_correction(self, scope: Scope, *, correction_id: str, at: datetime, sealed: bytes) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO corrections (tenant, subject, id, at, sealed) VALUES (?,?,?,?,?)",
                             (scope.tenant, scope.subject, correction_id, _ts(at), sealed))

    def corrections(self, tenant: str) -> list[SealedCorrection]:
        with self._lock:
            rows = self._db.execute("SELECT subject, id, at, sealed FROM corrections WHERE tenant = ?"
                                    " ORDER BY at, id", (tenant,)).fetchall()
        return [SealedCorrection(Scope(tenant, str(r[0])), str(r[1]), _dt(float(r[2])), bytes(r[3])) for r in rows]

    def subject_corrections(self, scope: Scope) -> int:
        with self._lock:
            row = self._db.execute("SELECT count(*) FROM corrections WHERE tenant = ? AND subject = ?",
                                   (scope.tenant, scope.subject)).fetchone()
        return int(row[0])

    def _transaction(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        return immediate(self._db, self._lock)

    def check(self) -> None:
        try:
            with self._lock:
                self._db.execute("SELECT 1").fetchone()
        except sqlite3.Error as exc:
            raise DependencyUnavailable("catalog unavailable") from exc

    def close(self) -> None:
        with self._lock:
            self._db.close()
