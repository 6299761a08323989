"""`carnet keys rotate` then `carnet keys rewrap`: data keys move to the new tenant key version, records
stay readable without being re-encrypted, and the old version is retired."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from carnet.adapters.keystores.files import FileKeyStore
from carnet.adapters.kms.dev import DevKms
from carnet.bootstrap.wiring import build
from carnet.entrypoints.cli.main import app
from carnet.errors import CarnetError
from carnet.ports import Embedder
from carnet.services.memories import reads as memories
from carnet.services.memories.remember import NewMemory, remember
from carnet.services.scope import scope_for
from carnet.settings.root import Settings


def test_rotate_rewrap_retire(tmp_path: Path, embedder: Embedder) -> None:
    settings = Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys")
    c = build(settings, embedder=embedder)
    for subject in ("A", "B"):
        remember(c.deps, tenant="t", subject_id=subject, actor="x", items=[NewMemory(text=f"Le membre {subject}.")])
    scope = scope_for(c.deps, "t", "A")
    c.close()
    store = FileKeyStore(settings.resolved_key_dir / "subjects")
    before = store.get("t", scope.subject)
    assert before is not None and before.wrapped.kek_version == 1

    runner = CliRunner()
    env = {"CARNET_KEY_DIR": str(settings.resolved_key_dir)}
    common = ["--tenant", "t", "--data-dir", str(settings.data_dir)]
    rotated = runner.invoke(app, ["keys", "rotate", *common], env=env)
    assert rotated.exit_code == 0 and "key version 2" in rotated.output
    rewrapped = runner.invoke(app, ["keys", "rewrap", *common], env=env)
    assert rewrapped.exit_code == 0, rewrapped.output
    result = json.loads(rewrapped.stdout.strip().splitlines()[-1])
    # two subjects' data keys and the tenant's hash key
    assert result == {"tenant": "t", "version": 2, "rewrapped": 3, "skipped": 0, "retired_below": 2}

    after = store.get("t", scope.subject)
    assert after is not None and after.wrapped.kek_version == 2 and after.key_id == before.key_id
    c = build(settings, embedder=embedder)
    try:
        assert memories.list_memories(c.deps, tenant="t", subject_id="A").items[0].text == "Le membre A."
    finally:
        c.close()
    # the old wrapping no longer opens: version 1 is retired
    with pytest.raises(CarnetError):
        DevKms(settings.resolved_key_dir / "kms").unwrap(before.wrapped)
