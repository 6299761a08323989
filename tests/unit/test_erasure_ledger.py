"""The erasure ledger file: append-only JSON lines, durable, never inside the data dir, never guessed."""

from __future__ import annotations

import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from carnet.adapters.local.erasure_ledger import FileErasureLedger
from carnet.errors import LedgerCorrupt
from carnet.ports import ErasureEntry

AT = datetime(2026, 5, 1, 2, 0, tzinfo=UTC)


def _entry(n: int, subject: str | None = "0" * 32) -> ErasureEntry:
    return ErasureEntry("assur-nord", subject, "~tenant-hash-key" if subject else None, AT + timedelta(seconds=n))


def test_entries_come_back_in_order_from_a_private_file(tmp_path: Path) -> None:
    ledger = FileErasureLedger(tmp_path / "keys" / "erasure-ledger.jsonl")
    assert ledger.entries() == []
    ledger.append(_entry(1))
    ledger.append(_entry(2, subject=None))  # a whole tenant
    assert ledger.entries() == [_entry(1), _entry(2, subject=None)]
    assert stat.S_IMODE(ledger.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(ledger.path.parent.stat().st_mode) == 0o700


def test_a_torn_last_line_is_ignored_then_cut_by_the_next_append(tmp_path: Path) -> None:
    ledger = FileErasureLedger(tmp_path / "ledger.jsonl")
    ledger.append(_entry(1))
    with ledger.path.open("ab") as fh:
        fh.write(b'{"v": 1, "tenant": "assur-no')  # a crash in the middle of an append
    assert ledger.entries() == [_entry(1)]
    ledger.append(_entry(2))
    assert ledger.entries() == [_entry(1), _entry(2)]


def test_a_torn_first_line_is_cut_too(tmp_path: Path) -> None:
    ledger = FileErasureLedger(tmp_path / "ledger.jsonl")
    ledger.path.write_bytes(b'{"v": 1, "ten')
    ledger.append(_entry(1))
    assert ledger.entries() == [_entry(1)]


def test_an_unreadable_line_in_the_middle_refuses_reading(tmp_path: Path) -> None:
    ledger = FileErasureLedger(tmp_path / "ledger.jsonl")
    ledger.append(_entry(1))
    with ledger.path.open("ab") as fh:
        fh.write(b"not json\n")
    ledger.append(_entry(2))
    with pytest.raises(LedgerCorrupt, match="line 2"):
        ledger.entries()


def test_naive_times_are_refused_both_ways(tmp_path: Path) -> None:
    ledger = FileErasureLedger(tmp_path / "ledger.jsonl")
    with pytest.raises(ValueError, match="timezone"):
        ledger.append(ErasureEntry("t", "0" * 32, None, datetime(2026, 5, 1)))
    ledger.path.write_text('{"v": 1, "tenant": "t", "subject": null, "hash_key": null, "at": "2026-05-01T02:00:00"}\n')
    with pytest.raises(LedgerCorrupt):
        ledger.entries()


def test_the_ledger_is_refused_inside_the_data_dir(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="inside the data dir"):
        FileErasureLedger(tmp_path / "data" / "ledger.jsonl", data_dir=tmp_path / "data")
