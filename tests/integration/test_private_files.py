"""Everything Carnet creates is private to its user (directories 0700, files 0600), even when it is
run by hand under the usual umask 022: the stores, SQLite's -wal and -shm, key files, the audit
trail, the scheduler's state, backups."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from typer.testing import CliRunner

from carnet.bootstrap.wiring import build
from carnet.entrypoints.cli.main import app
from carnet.ports import Embedder
from carnet.services.lifecycle.scheduler import Job, Scheduler
from carnet.services.memories.remember import NewMemory, remember
from carnet.settings.root import Settings


@contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def loose(*roots: Path) -> list[str]:
    """Every path under ``roots`` (themselves included) that group or others could use."""
    found: list[str] = []
    for root in roots:
        assert root.exists(), root
        paths = [root, *root.rglob("*")] if root.is_dir() else [root]
        for p in paths:
            mode = stat.S_IMODE(p.lstat().st_mode)
            want = 0o700 if p.is_dir() else 0o600
            if mode & 0o077 or (mode & want) != want:
                found.append(f"{p.relative_to(root.parent)} {mode:o}")
    return found


def test_a_store_run_by_hand_under_umask_022_creates_nothing_others_can_read(
        tmp_path: Path, embedder: Embedder) -> None:
    from carnet.bootstrap.ops import backup_source
    from carnet.services.backup.snapshots import create_backup

    settings = Settings(data_dir=tmp_path / "run" / "data", key_dir=tmp_path / "run" / "keys")
    with umask(0o022):
        c = build(settings, embedder=embedder)
        try:
            remember(c.deps, tenant="acme", subject_id="S1", actor="a",
                     items=[NewMemory(text="Le membre préfère être appelé le matin.")])
            c.audit.record(c.audit.event(tenant="acme", actor="a", action="test.write"))
            Scheduler([Job("noop", 3600, lambda _s: None)], state_file=settings.data_dir / "scheduler.json",
                      startup_delay=0)._save_state({"noop": 1.0})
            create_backup(source=backup_source(c), output=settings.resolved_backup_dir)
        finally:
            c.close()
    for name in ("catalog.sqlite3", "audit.sqlite3", "scheduler.json"):
        assert (settings.data_dir / name).exists(), name
    assert list(settings.resolved_backup_dir.iterdir()) and list(settings.resolved_key_dir.iterdir())
    assert loose(settings.data_dir, settings.resolved_key_dir, settings.resolved_backup_dir,
                 settings.resolved_audit_path) == []


def test_the_command_line_under_umask_022_creates_private_files(tmp_path: Path) -> None:
    data = tmp_path / "cli" / "carnet-data"
    with umask(0o022):
        done = CliRunner().invoke(app, ["apikey", "create", "--tenant", "acme", "--role", "agent",
                                        "--data-dir", str(data)], env={"CARNET_KEY_DIR": str(tmp_path / "cli" / "k")})
    assert done.exit_code == 0, done.output
    assert (data / "catalog.sqlite3").exists()
    assert loose(data, tmp_path / "cli" / "k") == []


def test_files_an_earlier_run_left_readable_are_made_private(tmp_path: Path) -> None:
    from carnet.adapters.sqlite.catalog import SqliteCatalog

    data = tmp_path / "old" / "data"
    with umask(0o022):
        data.mkdir(parents=True)
        for name in ("catalog.sqlite3", "catalog.sqlite3-wal", "catalog.sqlite3-shm"):
            (data / name).touch()
    data.chmod(0o755)
    SqliteCatalog(data / "catalog.sqlite3").close()
    assert loose(data) == []
