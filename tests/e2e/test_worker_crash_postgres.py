"""Several `carnet worker` processes share the PostgreSQL queue; one is killed with SIGKILL while it
is extracting (the model answers slowly). Every intake still ends done, exactly once.

What the workers share, and what this proves: the queue, the catalog (subject registry, pseudonym
maps) and the key store are shared, as in production; the vector store is not, because no Qdrant
server runs here and the embedded shard has one owner, so each worker writes to its own shard. The
test therefore proves the queue's side across processes: leases taken over after a kill -9, each
intake completed once, none lost, and the memory ids a taken-over intake gets are exactly those its
idempotency keys name, the same ids the dead worker would have written. In a shared store those ids
make a second application a no-op (shown on the embedded store by tests/integration/test_intakes.py).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pydantic import SecretStr

from carnet.bootstrap.container import Container
from carnet.bootstrap.wiring import build
from carnet.domain.intake import IntakeStatus, Message
from carnet.domain.records import Scope
from carnet.ports import Embedder
from carnet.services.apikeys import authenticate, create_key
from carnet.services.memories.remember import keyed_id
from carnet.settings.root import CatalogBackend, PostgresSettings, Settings
from tests.support.queue import wait_drained
from tests.support.vllm_server import VllmStandIn, answer, serving

SUBJECTS, PER_SUBJECT = 32, 1  # one intake per subject: no neighbour, so no contradiction judgment call
DRAIN_SECONDS = 180  # after the kill: the lease (5 s) expires and the two left finish every intake


def _facts(k: int) -> dict[str, object]:
    return {"facts": [{"text": f"Le membre a souscrit le contrat CTR-{k:06d}.", "category": "contrat",
                       "importance": 3, "valid_from": None, "worth_remembering": True, "about": "membre"}],
            "summary": ""}


def _worker(root: Path, n: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    data = root / f"worker-{n}"
    cmd = [sys.executable, "-m", "carnet", "worker", "--data-dir", str(data), "--threads", "2"]
    with (root / f"worker-{n}.log").open("wb") as log:  # the child keeps its own descriptor
        return subprocess.Popen(cmd, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=log)


def _holder(c: Container, ids: list[str], workers: list[subprocess.Popen[bytes]]) -> subprocess.Popen[bytes] | None:
    """The worker process whose lease (``worker:<host>:<pid>:<n>``) holds an intake being processed."""
    by_pid = {w.pid: w for w in workers}
    for iid in ids:
        found = c.queue.store.get("assur-nord", iid)
        if found is not None and found.status is IntakeStatus.PROCESSING and found.lease_owner:
            pid = int(found.lease_owner.split(":")[2])
            if pid in by_pid:
                return by_pid[pid]
    return None


@pytest.mark.slow
def test_kill_9_one_of_three_workers_every_intake_done_once(tmp_path: Path, embedder: Embedder,
                                                             postgres_dsn: str) -> None:
    settings = Settings(data_dir=tmp_path / "submitter", key_dir=tmp_path / "keys", catalog=CatalogBackend.POSTGRES,
                        postgres=PostgresSettings(dsn=SecretStr(postgres_dsn), pool_size=2))
    stand_in = VllmStandIn()
    total = SUBJECTS * PER_SUBJECT
    stand_in.push(*[answer(_facts(k), delay=0.4) for k in range(total * 3)])  # slow enough to be killed mid-call
    c = build(settings, embedder=embedder)
    try:
        key, _ = create_key(c.deps.catalog, c.pepper, tenant="assur-nord", roles=["agent"])
        who = authenticate(c.deps.catalog, c.pepper, key)
        ids = [c.facade.submit_messages(who, subject_id=f"MBR-{s}", session_id=f"call-{s}-{n}", idempotency_key=None,
                                        messages=[Message("user", f"Appel {n} du membre {s}.")]).id
               for n in range(PER_SUBJECT) for s in range(SUBJECTS)]
        with serving(stand_in) as llm:
            env = {"CARNET_KEY_DIR": str(tmp_path / "keys"), "CARNET_CATALOG": "postgres",
                   "CARNET_POSTGRES__DSN": postgres_dsn, "CARNET_POSTGRES__POOL_SIZE": "2",
                   "CARNET_EXTRACTOR": "mistral", "CARNET_LLM__BASE_URL": llm,
                   "CARNET_LLM__API_KEY": stand_in.api_key or "", "CARNET_LLM__MODEL": stand_in.served_model,
                   "CARNET_WORKERS__LEASE_SECONDS": "5", "CARNET_MAINTENANCE__SCHEDULER": "false",
                   "CARNET_LOG_LEVEL": "WARNING"}
            workers = [_worker(tmp_path, n, env) for n in range(3)]
            try:
                deadline = time.monotonic() + 120
                victim = None
                while victim is None and time.monotonic() < deadline:  # a worker holding an intake mid-call
                    victim = _holder(c, ids, workers)
                    time.sleep(0.05)
                assert victim is not None, "no worker ever held an intake"
                victim.send_signal(signal.SIGKILL)
                victim.wait()
                # Its own budget after the kill: three workers starting (torch, the model, Presidio) on a loaded
                # 2-core machine without AVX512 once left too little of a shared 120 s to drain 32 intakes.
                wait_drained(c.queue.store, timeout=DRAIN_SECONDS, poll=0.2)
            finally:
                alive = [w for w in workers if w.poll() is None]
                for w in alive:
                    w.send_signal(signal.SIGTERM)
                for w in alive:
                    w.wait(timeout=60)
        final = [c.queue.store.get("assur-nord", i) for i in ids]
        assert all(i is not None and i.status is IntakeStatus.DONE for i in final), [
            (i.status, i.reason) for i in final if i is not None and i.status is not IntakeStatus.DONE]
        taken_over = [i for i in final if i is not None and i.attempts > 1]
        assert taken_over, "the killed worker held no intake: the test proved nothing"
        for i in final:
            assert i is not None
            scope = Scope(i.tenant, i.subject)
            assert i.memory_ids == (keyed_id(c.deps.hasher, scope, f"intake:{i.id}:0"),)  # the ids its keys name
        all_ids = [m for i in final if i is not None for m in i.memory_ids]
        assert len(all_ids) == len(set(all_ids)) == total  # one memory per intake, none shared, none lost
        assert len(stand_in.requests) <= total + len(taken_over)  # a staged extraction is not asked again
        assert not stand_in.problems
    finally:
        c.close()
