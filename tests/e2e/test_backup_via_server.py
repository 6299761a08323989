"""`carnet backup create` while `carnet serve` holds the store (issue 13, defect 10): it asks the
running server to back up through `POST /api/v1/admin/backup` (role admin, audited) instead of
refusing; the key comes from CARNET_API_KEY, never from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from carnet.bootstrap.stores import build_control_plane
from carnet.entrypoints.cli.main import app
from carnet.services.apikeys import create_key
from carnet.services.backup.snapshots import list_backups
from carnet.settings.root import Settings
from tests.support.serve import serve_process

runner = CliRunner()


def _keys(root: Path) -> dict[str, str]:
    plane = build_control_plane(Settings(data_dir=root / "data", key_dir=root / "keys"))
    try:
        return {role: create_key(plane.catalog, plane.pepper, tenant="assur-nord", roles=[role])[0]
                for role in ("agent", "admin")}
    finally:
        plane.catalog.close()


@pytest.mark.slow
def test_backup_create_asks_the_running_server(tmp_path: Path) -> None:
    keys = _keys(tmp_path)
    backups = tmp_path / "backups"
    cli_env = {"CARNET_KEY_DIR": str(tmp_path / "keys"), "CARNET_BACKUP_DIR": str(backups)}
    args = ["backup", "create", "--data-dir", str(tmp_path / "data")]
    with serve_process(tmp_path, {"CARNET_BACKUP_DIR": str(backups)}) as (base, _):
        agent = {"Authorization": f"Bearer {keys['agent']}"}
        made = httpx.post(f"{base}/api/v1/subjects/ADH-1/memories", headers=agent,
                          json={"text": "Le membre habite à Lyon."}, timeout=30)
        assert made.status_code == 201, made.text

        alone = runner.invoke(app, args, env={**cli_env, "CARNET_API_KEY": None, "CARNET_URL": None})
        assert alone.exit_code == 2 and "Traceback" not in alone.output
        assert "CARNET_URL" in alone.output and "CARNET_API_KEY" in alone.output

        refused = httpx.post(f"{base}/api/v1/admin/backup", headers=agent, timeout=30)
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
        as_agent = runner.invoke(app, [*args, "--url", base], env={**cli_env, "CARNET_API_KEY": keys["agent"]})
        assert as_agent.exit_code == 2 and "admin" in as_agent.output and keys["agent"] not in as_agent.output

        done = runner.invoke(app, args, env={**cli_env, "CARNET_URL": base, "CARNET_API_KEY": keys["admin"]})
        assert done.exit_code == 0, done.output
        report = json.loads(done.stdout.strip().splitlines()[-1])
        assert report["records"] == 1 and report["file"].startswith("carnet-backup-")
        assert str(tmp_path) not in done.stdout  # the server's paths stay on the server
        listed = list_backups(directory=backups)
        assert [b.path.name for b in listed] == [report["file"]] and listed[0].manifest is not None
        assert listed[0].manifest.records == 1

        admin = {"Authorization": f"Bearer {keys['admin']}"}
        trail = httpx.get(f"{base}/api/v1/audit", headers=admin, timeout=30).text.splitlines()
        entries = [json.loads(line) for line in trail if '"backup.create"' in line]
        assert entries and entries[-1]["outcome"] == "ok" and entries[-1]["actor"] == keys["admin"].split("_")[1]
    assert "--api-key" not in runner.invoke(app, ["backup", "create", "--help"]).output
