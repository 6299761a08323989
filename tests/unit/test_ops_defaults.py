"""Operational defaults (issue 13, defect 10): daily backups unless turned off, keys beside the data
directory (never inside it, never committed), the demo in its own directory."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from pydantic import ValidationError

from carnet.settings.root import Settings

ROOT = Path(__file__).resolve().parents[2]


def test_the_embedded_server_backs_itself_up_daily_by_default() -> None:
    m = Settings().maintenance
    assert m.backup_interval_hours == 24 and m.backup_keep == 7


@pytest.mark.parametrize("off", ["0", "off", "OFF", "false", "none"])
def test_scheduled_backups_can_be_turned_off(monkeypatch: pytest.MonkeyPatch, off: str) -> None:
    monkeypatch.setenv("CARNET_MAINTENANCE__BACKUP_INTERVAL_HOURS", off)
    assert not Settings().maintenance.backup_every_seconds


@pytest.mark.parametrize("bad", ["-1", "soon", "nan"])
def test_a_bad_backup_interval_is_refused(monkeypatch: pytest.MonkeyPatch, bad: str) -> None:
    monkeypatch.setenv("CARNET_MAINTENANCE__BACKUP_INTERVAL_HOURS", bad)
    with pytest.raises(ValidationError):
        Settings()


def test_keys_and_backups_default_to_siblings_of_the_data_dir(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    s = Settings(data_dir=tmp_path / "store")
    assert s.resolved_key_dir == tmp_path / "store-keys"
    assert s.resolved_backup_dir == tmp_path / "store-backups"
    assert s.resolved_erasure_ledger == tmp_path / "store-keys" / "erasure-ledger.jsonl"
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    for spelled in (".", "./", str(work) + "/"):  # the data dir named by its path: still its sibling
        s = Settings(data_dir=Path(spelled))
        assert s.resolved_key_dir.absolute() == tmp_path / "work-keys", spelled
        assert s.resolved_backup_dir.absolute() == tmp_path / "work-backups", spelled
    default = Settings()
    assert default.resolved_key_dir.absolute() == work / "carnet-data-keys"  # beside ./carnet-data


def test_what_carnet_creates_in_a_checkout_is_ignored_by_git(tmp_path: Path) -> None:
    """The default data, keys, backups and demo directories never reach a commit."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    created = ["carnet-data/catalog.sqlite3", "carnet-data-keys/kms/dev-kms.json", "carnet-data-keys/subjects/x",
               "carnet-data-backups/carnet-backup-x.tar.gz", "carnet-demo/catalog.sqlite3",
               "carnet-demo-keys/dev-master.key", "carnet-demo-backups/x.tar.gz"]
    out = subprocess.run(["git", "check-ignore", "--no-index", *created], cwd=ROOT,
                         capture_output=True, text=True, check=False)
    assert sorted(out.stdout.split()) == sorted(created)


def test_a_second_backup_while_one_runs_is_a_conflict() -> None:
    """The server backs up one at a time: an admin asking meanwhile gets 409, never a half archive."""
    from carnet.bootstrap.ops import _one_backup, backup_now
    from carnet.errors import Conflict

    with _one_backup, pytest.raises(Conflict, match="already running"):
        backup_now(object())  # type: ignore[arg-type]  # refused before the container is used
