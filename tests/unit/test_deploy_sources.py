"""deploy/ is the one source of the wrapper scripts and of the systemd hardening block: every copy the
chart and the Ansible collection keep (they can only package files inside their own directory) is
checked equal to it. A failure names the copy and the command that rewrites it."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "sync-deploy-copies"


@cache
def _sync() -> ModuleType:
    """scripts/sync-deploy-copies loaded as a module (a script without a .py suffix)."""
    loader = importlib.machinery.SourceFileLoader("carnet_sync_deploy_copies", str(SCRIPT))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


_FIX = "differs from its source in deploy/: run scripts/sync-deploy-copies"


@pytest.mark.parametrize(("source", "copy"), _sync().script_copies(), ids=lambda p: _name(p))
def test_script_copies_are_the_source(source: Path, copy: Path) -> None:
    assert copy.is_file(), f"{_name(copy)} is missing: run scripts/sync-deploy-copies"
    assert copy.read_bytes() == source.read_bytes(), f"{_name(copy)} {_FIX}"
    assert copy.stat().st_mode & 0o777 == source.stat().st_mode & 0o777, f"{_name(copy)}: mode {_FIX}"


@pytest.mark.parametrize("unit", _sync().hardened_units(), ids=_name)
def test_each_unit_carries_the_hardening_block(unit: Path) -> None:
    sync = _sync()
    lines = unit.read_text().splitlines(keepends=True)
    start, end = sync.block_span(lines, unit)
    assert "".join(lines[start:end]) == sync.HARDENING.read_text(), f"{_name(unit)}: hardening block {_FIX}"


def test_every_carnet_unit_and_template_is_covered() -> None:
    """A new service unit is hardened from the source too: the list is globbed, not written out."""
    names = {p.name for p in _sync().hardened_units()}
    assert {"carnet-api.service", "carnet-worker@.service", "carnet-maintain.service", "carnet-backup.service",
            "carnet-api.service.j2", "carnet-worker@.service.j2", "carnet-maintain.service.j2",
            "carnet-backup.service.j2"} <= names


def test_check_mode_names_what_differs(tmp_path: Path) -> None:
    """--check on a tree with one stale copy exits 1 and says which file and what to run; sync repairs it."""
    sync = _sync()
    role = sync.ROLE.relative_to(ROOT)
    for part in ("deploy/bin", "deploy/systemd", "helm/carnet/files", f"{role}/files", f"{role}/templates"):
        shutil.copytree(ROOT / part, tmp_path / part)
    (tmp_path / "scripts").mkdir()
    shutil.copy2(SCRIPT, tmp_path / "scripts")
    command = [sys.executable, str(tmp_path / "scripts" / "sync-deploy-copies")]
    subprocess.run(command, capture_output=True, timeout=30, check=True)  # clean, whatever the checkout holds
    stale = tmp_path / "helm" / "carnet" / "files" / "carnet-env-from-files"
    stale.write_text("#!/bin/sh\nexit 1\n")
    unit = tmp_path / "deploy" / "systemd" / "carnet-api.service"
    unit.write_text(unit.read_text().replace("ProtectHome=yes\n", "ProtectHome=read-only\n"))
    check = subprocess.run([*command, "--check"], capture_output=True, text=True, timeout=30, check=False)
    assert check.returncode == 1
    assert sorted(check.stdout.splitlines()) == [
        f"deploy/systemd/carnet-api.service {_FIX}",
        f"helm/carnet/files/carnet-env-from-files {_FIX}",
    ]
    subprocess.run(command, capture_output=True, timeout=30, check=True)
    assert subprocess.run([*command, "--check"], capture_output=True, timeout=30, check=False).returncode == 0
    assert "ProtectHome=yes\n" in unit.read_text()
    assert stale.read_bytes() == (ROOT / "deploy" / "bin" / "carnet-env-from-files").read_bytes()
