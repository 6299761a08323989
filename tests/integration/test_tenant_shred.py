"""Panic purge: `carnet tenant shred` destroys the tenant's KMS key and data keys; every record of the
tenant becomes unreadable at once, other tenants are untouched, and a confirmation guard stands first."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from carnet.bootstrap.wiring import build
from carnet.crypto.errors import KeyDestroyed
from carnet.domain.unreadable import Unreadable
from carnet.entrypoints.cli.main import app
from carnet.errors import SubjectNotFound
from carnet.ports import Embedder, RecordFilter
from carnet.services.memories import reads as memories
from carnet.services.memories.remember import NewMemory, remember
from carnet.services.scope import scope_for
from carnet.settings.root import Settings


def test_tenant_shred(tmp_path: Path, embedder: Embedder) -> None:
    settings = Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys")
    c = build(settings, embedder=embedder)
    for tenant, subject in (("t1", "A"), ("t1", "B"), ("t2", "A")):
        remember(c.deps, tenant=tenant, subject_id=subject, actor="x", items=[NewMemory(text=f"Fait de {tenant}.")])
    old_scope = scope_for(c.deps, "t1", "A")
    c.close()

    runner = CliRunner()
    env = {"CARNET_KEY_DIR": str(settings.resolved_key_dir)}
    base = ["tenant", "shred", "--tenant", "t1", "--data-dir", str(settings.data_dir)]
    refused = runner.invoke(app, base, env=env)
    assert refused.exit_code == 2 and "--confirm t1" in refused.output
    refused = runner.invoke(app, [*base, "--confirm", "t2"], env=env)
    assert refused.exit_code == 2
    done = runner.invoke(app, [*base, "--confirm", "t1"], env=env)
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {
        "tenant": "t1", "kms_key_destroyed": True, "data_keys_deleted": 3}  # 2 subjects + the hash key

    c = build(settings, embedder=embedder)
    try:
        # the records are still on disk under the old hash, and none of them opens
        skipped: list[Unreadable] = []
        assert c.deps.index.scroll(old_scope, where=RecordFilter(statuses=None), limit=10, skipped=skipped)[0] == []
        assert skipped and {u.reason for u in skipped} == {KeyDestroyed.code}
        # the subject id no longer leads to them: the tenant's hash key is a new one
        with pytest.raises(SubjectNotFound):
            memories.list_memories(c.deps, tenant="t1", subject_id="A")
        assert memories.list_memories(c.deps, tenant="t2", subject_id="A").items[0].text == "Fait de t2."
    finally:
        c.close()


def test_tenant_shred_reaches_the_running_servers_with_postgres(tmp_path: Path, postgres_dsn: str) -> None:
    """`carnet tenant shred` is another process than the servers: with PostgreSQL they drop the tenant's
    cached keys (subjects' and hash key) within 2 s (docs/operations.md, "Key cache across processes")."""
    from tests.support.shared_index import HashEmbedder
    from tests.support.subject_race import settings as pg_settings

    settings = pg_settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys", dsn=postgres_dsn)
    server = build(settings, embedder=HashEmbedder())
    try:
        for tenant in ("t1", "t2"):
            remember(server.deps, tenant=tenant, subject_id="A", actor="x", items=[NewMemory(text="Un fait.")])
        t1, t2 = scope_for(server.deps, "t1", "A"), scope_for(server.deps, "t2", "A")
        assert server.keyring.cached(t1.tenant, t1.subject) and server.keyring.cached(t2.tenant, t2.subject)
        env = {"CARNET_KEY_DIR": str(settings.resolved_key_dir), "CARNET_CATALOG": "postgres",
               "CARNET_POSTGRES__DSN": postgres_dsn, "CARNET_PII__ENGINE": "patterns"}
        done = CliRunner().invoke(app, ["tenant", "shred", "--tenant", "t1", "--confirm", "t1",
                                        "--data-dir", str(tmp_path / "cli")], env=env)
        assert done.exit_code == 0, done.output
        deadline = time.monotonic() + 2.0
        while server.keyring.cached(t1.tenant, t1.subject) or server.keyring.cached("t1", "~tenant-hash-key"):
            assert time.monotonic() < deadline, "the server still holds the shredded tenant's keys"
            time.sleep(0.005)
        assert server.keyring.cached(t2.tenant, t2.subject)  # another tenant's stay
        assert [(e.tenant, e.subject) for e in server.deps.ledger.entries()] == [("t1", None)]  # one shared ledger
    finally:
        server.close()
