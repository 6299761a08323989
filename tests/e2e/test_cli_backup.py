"""`carnet backup create|list|restore|reapply-erasures`, invoked in-process like an operator would."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from carnet.bootstrap.container import Container
from carnet.entrypoints.cli.main import app
from carnet.services.memories.remember import NewMemory, remember

runner = CliRunner()


def _env(c: Container) -> dict[str, str]:
    return {"CARNET_KEY_DIR": str(c.settings.resolved_key_dir)}


def _json(stdout: str) -> object:
    return json.loads(stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_create_list_erase_restore(container: Container, tmp_path: Path) -> None:
    data_dir = str(container.settings.data_dir)
    env = _env(container)
    backups = tmp_path / "backups"
    for subject in ("ADH-1", "ADH-2"):
        remember(container.deps, tenant="t", subject_id=subject, actor="a",
                 items=[NewMemory(text=f"Le membre {subject} habite à Lyon.")])
    held = runner.invoke(app, ["backup", "create", "--data-dir", data_dir, "--output", str(backups)], env=env)
    assert held.exit_code == 2 and "held by another process" in held.output and "Traceback" not in held.output
    container.close()

    made = runner.invoke(app, ["backup", "create", "--data-dir", data_dir, "--output", str(backups)], env=env)
    assert made.exit_code == 0, made.output
    report = _json(made.stdout)
    assert isinstance(report, dict) and report["records"] == 2 and "backup: stores copied" in made.stderr
    listed = runner.invoke(app, ["backup", "list", "--data-dir", data_dir, "--dir", str(backups)], env=env)
    assert [b["path"] for b in _json(listed.stdout)] == [report["path"]]  # type: ignore[union-attr]

    erased = runner.invoke(app, ["subject", "erase", "--tenant", "t", "--subject", "ADH-1", "--data-dir", data_dir],
                           env=env)
    assert erased.exit_code == 0, erased.output

    unconfirmed = runner.invoke(app, ["backup", "restore", report["path"], "--data-dir", data_dir], env=env)
    assert unconfirmed.exit_code == 2 and "--yes" in unconfirmed.output
    restored = runner.invoke(app, ["backup", "restore", report["path"], "--data-dir", data_dir, "--yes"], env=env)
    assert restored.exit_code == 0, restored.output
    summary = _json(restored.stdout)
    assert isinstance(summary, dict) and summary["reerased"]["applied"] == 1
    assert summary["reerased"]["records_deleted"] == 1 and summary["reerased"]["verified"] is True
    assert "ADH-1" not in restored.stdout and "ADH-1" not in restored.stderr


def test_a_damaged_archive_ends_with_exit_code_2(tmp_path: Path) -> None:
    bad = tmp_path / "carnet-backup-bad.tar.gz"
    bad.write_bytes(b"\x1f\x8b not really gzip")
    env = {"CARNET_KEY_DIR": str(tmp_path / "keys")}
    result = runner.invoke(app, ["backup", "restore", str(bad), "--data-dir", str(tmp_path / "data"), "--yes"],
                           env=env)
    assert result.exit_code == 2 and "damaged" in result.output and "Traceback" not in result.output
    listed = runner.invoke(app, ["backup", "list", "--dir", str(tmp_path)], env=env)
    assert _json(listed.stdout)[0]["error"]  # type: ignore[index]


def test_reapply_erasures_wants_an_aware_time(tmp_path: Path) -> None:
    result = runner.invoke(app, ["backup", "reapply-erasures", "--since", "2026-05-01T02:00:00",
                                 "--data-dir", str(tmp_path / "data")], env={"CARNET_KEY_DIR": str(tmp_path / "k")})
    assert result.exit_code == 2 and "time zone" in result.output
