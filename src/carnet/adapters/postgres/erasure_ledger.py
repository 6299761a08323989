"""``ErasureLedger`` on PostgreSQL (schema ``carnet_erasures``, migration 0003): one ledger for every
API and ``carnet worker`` process of every node, instead of a file per node.

An entry is a row holding the erasure's canonical JSON line (``adapters/local/erasure_line.py``: keyed
hashes only, never a subject id) and its time. ``append`` commits durably (``synchronous_commit``
on) before it returns, so an erasure never starts unrecorded; ``entries`` reads them oldest first
(erasure time, then append order) and a row that does not decode raises ``LedgerCorrupt``. The
table refuses UPDATE, DELETE and TRUNCATE (a trigger), and lives apart from the catalog's schema so
restoring the catalog never rewinds it.

``take_over`` imports a file ledger once (an upgrade from a single node, or from a version that kept
one file per node): each entry is inserted unless the same line is already there, all in one
transaction, then the file is renamed aside."""

from __future__ import annotations

from pathlib import Path

import psycopg

from carnet.adapters.local.erasure_ledger import FileErasureLedger
from carnet.adapters.local.erasure_line import decode, encode
from carnet.adapters.postgres.pool import DURABLE, UNAVAILABLE, Pool, connection, utc
from carnet.errors import DependencyUnavailable
from carnet.ports import ErasureEntry

_ERRORS: tuple[type[Exception], ...] = (psycopg.Error, *UNAVAILABLE)
_WHERE = "carnet_erasures.entries"


def _write_failed() -> DependencyUnavailable:
    return DependencyUnavailable("erasure ledger: cannot append to PostgreSQL")


def _read_failed() -> DependencyUnavailable:
    return DependencyUnavailable("erasure ledger: cannot read PostgreSQL")


class PostgresErasureLedger:
    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    def append(self, entry: ErasureEntry) -> None:
        """``INSERT INTO carnet_erasures.entries``, committed with ``synchronous_commit`` on. The same
        line again (a retry after a commit whose answer was lost) is already there: nothing to add."""
        self._insert([entry])

    def entries(self) -> list[ErasureEntry]:
        """``SELECT … ORDER BY at, seq``; the row's sequence number is the line number of an error."""
        with connection(self._pool, _read_failed, catch=_ERRORS) as db:
            rows = db.execute(f"SELECT seq, doc FROM {_WHERE} ORDER BY at, seq").fetchall()
        return [decode(doc, int(seq), _WHERE) for seq, doc in rows]

    def take_over(self, file: FileErasureLedger) -> Path | None:
        """Import ``file``'s entries (those already here are skipped) and rename it aside; the new
        name, or ``None`` when there was no file. Raises ``LedgerCorrupt`` (nothing imported, the file
        kept) when a line of it does not decode."""
        return file.hand_over(lambda entries: self._insert(entries))

    def _insert(self, entries: list[ErasureEntry]) -> None:
        rows = [(utc(e.at), encode(e)) for e in entries]
        if not rows:
            return
        with connection(self._pool, _write_failed, transaction=True, catch=_ERRORS) as db:
            db.execute(DURABLE)
            with db.cursor() as cur:
                cur.executemany(f"INSERT INTO {_WHERE} (at, doc) VALUES (%s, %s) ON CONFLICT (doc) DO NOTHING", rows)

    def close(self) -> None:
        self._pool.close()
