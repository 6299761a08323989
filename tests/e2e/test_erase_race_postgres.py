"""An erasure in one process and a worker applying the same subject's intake in another, on a
PostgreSQL control plane and a store they share (tests/support/shared_index.py, standing in for a
Qdrant server): whichever gets the subject first, once both are done no memory of the subject is
left and the erasure receipt is complete.

- ``worker_first``: the worker is inside its upsert (holding the subject) when the erasure starts;
  the erasure must wait for it, then delete what it wrote.
- ``erase_first``: the worker leased the intake before the erasure and finishes extracting while
  the erasure is between deleting the records and deleting the intakes; the worker must wait, then
  find its intake gone and write nothing.

With a lock inside each process only, both orders leave memories behind (the first in the store, the
second in the store and in the receipt's verification)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from carnet.bootstrap import wiring as bootstrap
from carnet.domain.intake import Message
from carnet.ports import RecordFilter
from carnet.services.apikeys import authenticate, create_key
from carnet.services.scope import scope_for
from tests.support.shared_index import HashEmbedder, Hooked, connect, start_server
from tests.support.subject_race import settings, wait_for

TENANT, SUBJECT = "assur-nord", "MBR-race-1"
ROOT = Path(__file__).resolve().parents[2]


def _spawn(role: str, config: dict[str, object], log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    with log.open("wb") as err:  # the child keeps its own descriptor
        argv = [sys.executable, "-m", "tests.support.subject_race", json.dumps({**config, "role": role})]
        return subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=err)


@pytest.mark.slow
@pytest.mark.parametrize("order", ["worker_first", "erase_first"])
def test_an_erasure_is_never_followed_by_memories_of_an_intake_applied_elsewhere(
        order: str, tmp_path: Path, postgres_dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    manager, address, authkey = start_server(tmp_path / "shard")
    markers = tmp_path / "markers"
    markers.mkdir()
    procs: list[subprocess.Popen[bytes]] = []
    try:
        shared = connect(address, authkey)
        monkeypatch.setattr(bootstrap, "build_index", lambda settings, dim, model_id=None: Hooked(shared))
        c = bootstrap.build(settings(data_dir=tmp_path / "api", key_dir=tmp_path / "keys", dsn=postgres_dsn),
                            embedder=HashEmbedder())
        try:
            key, _ = create_key(c.deps.catalog, c.pepper, tenant=TENANT, roles=["agent"])
            who = authenticate(c.deps.catalog, c.pepper, key)
            intake = c.facade.submit_messages(who, subject_id=SUBJECT, session_id="call-1", idempotency_key=None,
                                              messages=[Message("user", "Le membre a souscrit le contrat CTR-1.")])
            config = {"address": list(address), "authkey": authkey.hex(), "dsn": postgres_dsn, "order": order,
                      "key_dir": str(tmp_path / "keys"), "tenant": TENANT, "subject": SUBJECT,
                      "markers": str(markers)}
            if order == "worker_first":
                (markers / "go").touch()
            procs = [_spawn(role, {**config, "data_dir": str(tmp_path / role)}, tmp_path / f"{role}.log")
                     for role in ("worker", "eraser")]
            try:
                if order == "worker_first":
                    wait_for(markers / "ready-eraser")
                    wait_for(markers / "applying")  # the worker is writing the subject's memories
                    (markers / "start-erase").touch()
                else:
                    wait_for(markers / "ready-eraser")
                    wait_for(markers / "extracting")  # the worker holds the intake's lease
                    (markers / "start-erase").touch()
                    wait_for(markers / "erasing")  # records deleted, intakes not yet
                    (markers / "go").touch()
                for p in procs:
                    p.wait(timeout=60)
            except (TimeoutError, subprocess.TimeoutExpired):
                logs = {r: (tmp_path / f"{r}.log").read_text(errors="replace")[-3000:] for r in ("worker", "eraser")}
                pytest.fail(f"a side never got where it should: {logs}")
            for role, p in zip(("worker", "eraser"), procs, strict=True):
                assert p.returncode == 0, (tmp_path / f"{role}.log").read_text(errors="replace")[-3000:]
            receipt = json.loads((markers / "result-eraser.json").read_text())
            assert receipt["complete"] is True, receipt
            scope = scope_for(c.deps, TENANT, SUBJECT)
            assert c.deps.index.count(scope, where=RecordFilter(statuses=None)) == 0  # nothing came back
            assert c.deps.intakes.get(TENANT, intake.id) is None  # erased with its subject
            if order == "worker_first":
                assert receipt["records_deleted"] >= 1  # the worker's memories were there, and were erased
        finally:
            c.close()
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        manager.shutdown()
