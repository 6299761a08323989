"""The demo (issue 13, defect 10): `carnet serve --demo` and scripts/run.sh seed their own store
(./carnet-demo, keys beside it), never the real data dir, and only once: a restart tells no second story,
but prints a new key for the person at the terminal (issue 50: a key that works with the running server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from carnet.bootstrap.stores import build_control_plane
from carnet.entrypoints.cli.demo import DEMO_DIR, TENANT, demo_settings, seed_key, visitor_key
from carnet.services.apikeys import authenticate
from carnet.settings.root import Settings


def test_the_demo_never_uses_the_real_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CARNET_DATA_DIR", str(tmp_path / "real"))
    monkeypatch.setenv("CARNET_KEY_DIR", str(tmp_path / "real-keys"))
    monkeypatch.setenv("CARNET_AUDIT_PATH", str(tmp_path / "real-audit.sqlite3"))
    real = Settings()
    demo = demo_settings(real, None)
    assert demo.data_dir == DEMO_DIR == Path("carnet-demo")
    assert demo.resolved_key_dir == Path("carnet-demo-keys") and demo.resolved_backup_dir == Path("carnet-demo-backups")
    assert demo.resolved_audit_path == DEMO_DIR / "audit.sqlite3"
    assert demo.resolved_erasure_ledger == Path("carnet-demo-keys") / "erasure-ledger.jsonl"
    assert real.data_dir == tmp_path / "real"  # untouched
    chosen = demo_settings(real, tmp_path / "mine")
    assert chosen.data_dir == tmp_path / "mine" and chosen.resolved_key_dir == tmp_path / "mine-keys"


def test_the_demo_is_seeded_once(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "carnet-demo")
    plane = build_control_plane(settings)
    try:
        first = seed_key(plane.catalog, plane.pepper)
        assert first is not None and first.startswith("crn_")
        assert seed_key(plane.catalog, plane.pepper) is None  # a restart: no second key, no second story
        assert [k.roles for k in plane.catalog.api_keys(TENANT)] == [("agent",)]
    finally:
        plane.catalog.close()


def test_every_start_gives_the_visitor_a_key_of_its_own_that_works(tmp_path: Path) -> None:
    plane = build_control_plane(Settings(data_dir=tmp_path / "carnet-demo"))
    try:
        first, second = visitor_key(plane.catalog, plane.pepper), visitor_key(plane.catalog, plane.pepper)
        assert first != second
        for key in (first, second):  # an earlier start's key still works
            assert authenticate(plane.catalog, plane.pepper, key).tenant == TENANT
    finally:
        plane.catalog.close()
