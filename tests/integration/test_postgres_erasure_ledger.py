"""The erasure ledger in PostgreSQL (``carnet_erasures.entries``): append-only, oldest first, never
guessed, shared by every process, and taking over a file ledger once on upgrade."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
from pydantic import SecretStr

from carnet.adapters.local.erasure_ledger import FileErasureLedger
from carnet.adapters.postgres.erasure_ledger import PostgresErasureLedger
from carnet.bootstrap import wiring as bootstrap
from carnet.errors import DependencyUnavailable, LedgerCorrupt
from carnet.ports import ErasureEntry
from carnet.settings.root import CatalogBackend, PostgresSettings, Settings
from tests.support.postgres import open_test_pool

AT = datetime(2026, 5, 1, 2, 0, tzinfo=UTC)
HASH = "~tenant-hash-key"


def _entry(n: int, subject: str | None = "a" * 32) -> ErasureEntry:
    return ErasureEntry("assur-nord", subject, HASH if subject else None, AT + timedelta(seconds=n))


@pytest.fixture
def ledger(postgres_dsn: str) -> Iterator[PostgresErasureLedger]:
    made = PostgresErasureLedger(open_test_pool(postgres_dsn, size=2))
    try:
        yield made
    finally:
        made.close()


def test_entries_come_back_oldest_first_and_once(ledger: PostgresErasureLedger) -> None:
    assert ledger.entries() == []
    later, tenant, first, same_time = _entry(5), _entry(3, subject=None), _entry(1), _entry(1, subject="b" * 32)
    for e in (later, tenant, first, same_time):
        ledger.append(e)
    ledger.append(first)  # a retry after a commit whose answer was lost: already there
    assert ledger.entries() == [first, same_time, tenant, later]  # by erasure time, then append order


def test_the_table_is_append_only(ledger: PostgresErasureLedger, postgres_dsn: str) -> None:
    ledger.append(_entry(1))
    with psycopg.connect(postgres_dsn, autocommit=True) as db:
        for sql in ("UPDATE carnet_erasures.entries SET doc = '{}'", "DELETE FROM carnet_erasures.entries",
                    "TRUNCATE carnet_erasures.entries"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
                db.execute(sql.encode())
    assert ledger.entries() == [_entry(1)]


@pytest.mark.parametrize("doc", ['{"v": 2, "tenant": "t", "subject": null, "hash_key": null, "at": "2026-05-01"}',
                                 '{"v": 1, "tenant": "t", "subject": null, "hash_key": null, "at": "2026-05-01"}',
                                 "not json"])
def test_a_row_that_does_not_decode_fails_the_read(ledger: PostgresErasureLedger, postgres_dsn: str,
                                                    doc: str) -> None:
    ledger.append(_entry(1))
    with psycopg.connect(postgres_dsn, autocommit=True) as db:  # a newer version's row, a naive time, garbage
        db.execute("INSERT INTO carnet_erasures.entries (at, doc) VALUES (%s, %s)", (AT + timedelta(days=1), doc))
    with pytest.raises(LedgerCorrupt) as raised:
        ledger.entries()
    assert raised.value.context["line"] == 2  # the row's sequence number


def test_an_unreachable_database_refuses_the_append(postgres_dsn: str) -> None:
    closed = PostgresErasureLedger(open_test_pool(postgres_dsn, size=1))
    closed.close()
    with pytest.raises(DependencyUnavailable):
        closed.append(_entry(1))
    with pytest.raises(DependencyUnavailable):
        closed.entries()


def test_a_file_ledger_is_taken_over_once(ledger: PostgresErasureLedger, tmp_path: Path) -> None:
    file = FileErasureLedger(tmp_path / "keys" / "erasure-ledger.jsonl")
    for e in (_entry(1), _entry(2, subject=None), _entry(3)):
        file.append(e)
    with file.path.open("ab") as fh:
        fh.write(b'{"v": 1, "tenant": "assur-no')  # a torn append: never returned, so never happened
    ledger.append(_entry(3))  # already erased through PostgreSQL (a node upgraded first)
    ledger.append(_entry(4))
    kept = ledger.take_over(file)
    assert ledger.entries() == [_entry(1), _entry(2, subject=None), _entry(3), _entry(4)]
    assert kept is not None and kept.name.startswith("erasure-ledger.jsonl.imported-") and not file.path.exists()
    assert ledger.take_over(file) is None  # once
    file.append(_entry(5))  # a node still on the old version, during a rolling upgrade
    ledger.take_over(file)
    assert ledger.entries()[-1] == _entry(5)


def test_a_corrupt_file_ledger_is_not_taken_over(ledger: PostgresErasureLedger, tmp_path: Path) -> None:
    file = FileErasureLedger(tmp_path / "erasure-ledger.jsonl")
    file.append(_entry(1))
    with file.path.open("ab") as fh:
        fh.write(b"garbage\n")
    with pytest.raises(LedgerCorrupt):
        ledger.take_over(file)
    assert ledger.entries() == [] and file.path.exists()  # nothing imported, the file kept for a person to look at


def test_bootstrap_wires_the_table_with_postgres_and_imports_the_file(tmp_path: Path, postgres_dsn: str) -> None:
    keys = tmp_path / "keys"
    FileErasureLedger(keys / "erasure-ledger.jsonl").append(_entry(1))
    embedded = bootstrap.build_erasure_ledger(Settings(data_dir=tmp_path / "data", key_dir=keys))
    assert isinstance(embedded, FileErasureLedger)
    pg = Settings(data_dir=tmp_path / "data", key_dir=keys, catalog=CatalogBackend.POSTGRES,
                  postgres=PostgresSettings(dsn=SecretStr(postgres_dsn), pool_size=1))
    shared = bootstrap.build_erasure_ledger(pg)
    try:
        assert isinstance(shared, PostgresErasureLedger)
        assert shared.entries() == [_entry(1)]
        assert not (keys / "erasure-ledger.jsonl").exists()
    finally:
        shared.close()
