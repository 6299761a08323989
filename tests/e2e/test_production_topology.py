"""The API end to end on the production topology, every part in a process or server of its own: two
``carnet serve`` processes and one ``carnet worker`` sharing PostgreSQL (catalog, intake queue, audit,
erasure ledger, subject locks, key invalidations), the Qdrant test server over HTTP (the vector store
of both APIs and of the worker) and an OpenBao dev server (the KMS, and the wrapped data keys in its
KV store). A note written through one API is found through the other, a call posted to the second is
extracted by the worker, another tenant sees nothing, and an erasure through one API is complete for
both: the records gone from the shared store, the subject's key destroyed in OpenBao, the ledger row
in PostgreSQL. What this topology does not have here: TLS between the parts (tested link by link
elsewhere), several Qdrant or PostgreSQL nodes (docs/operations.md)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import hvac
import hvac.exceptions
import psycopg
import pytest
from qdrant_client import QdrantClient

from carnet.bootstrap.stores import build_control_plane
from carnet.entrypoints.http.server import free_port, wait_ready
from carnet.services.apikeys import create_key
from carnet.settings.root import Settings
from tests.support.openbao import transit_server
from tests.support.qdrant_rest import RunningQdrant
from tests.support.serve import stop

pytestmark = pytest.mark.slow
TENANT, OTHER_TENANT, SUBJECT = "assur-nord", "banque-sud", "ADH-7311"
CALL = {"session_id": "call-1", "messages": [
    {"role": "advisor", "content": "Quelle est votre nouvelle adresse ?", "at": "2026-11-30T10:00:00+01:00"},
    {"role": "user", "content": "J'habite maintenant au 4 rue des Lilas, 67000 Strasbourg.",
     "at": "2026-11-30T10:00:20+01:00"}]}


def _environment(tmp_path: Path, dsn: str, qdrant: RunningQdrant, collection: str, bao_url: str, token: str,
                 bao_ca: Path) -> dict[str, str]:
    return {
        "CARNET_KEY_DIR": str(tmp_path / "keys"),  # the dev pepper and tenant secret, shared as a mounted secret
        "CARNET_CATALOG": "postgres", "CARNET_POSTGRES__DSN": dsn, "CARNET_POSTGRES__POOL_SIZE": "2",
        "CARNET_VECTOR_BACKEND": "server", "CARNET_QDRANT__URL": qdrant.url, "CARNET_QDRANT__COLLECTION": collection,
        "CARNET_KMS_BACKEND": "vault", "CARNET_KEY_STORE": "vault", "CARNET_VAULT__URL": bao_url,
        "CARNET_VAULT__AUTH": "token", "CARNET_VAULT__TOKEN": token, "CARNET_VAULT__CA_CERT": str(bao_ca),
        "CARNET_WORKERS__IN_PROCESS": "false", "CARNET_MAINTENANCE__SCHEDULER": "false", "CARNET_LOG_LEVEL": "WARNING",
    }


def _settings(env: dict[str, str], data_dir: Path) -> Settings:
    """This process's view of the same settings (to create the API keys, as `carnet apikey create` does)."""
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        return Settings(data_dir=data_dir)
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _start(root: Path, env: dict[str, str], *args: str) -> subprocess.Popen[bytes]:
    """``carnet ARGS --data-dir ROOT/data`` in the background, its stderr in ROOT/carnet.log."""
    root.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "carnet", *args, "--data-dir", str(root / "data")]
    with (root / "carnet.log").open("wb") as log:
        return subprocess.Popen(cmd, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=log)


def _count(dsn: str, sql: str) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(sql.encode()).fetchone()
    assert row is not None
    return int(row[0])


@pytest.fixture
def topology(tmp_path: Path, postgres_dsn: str, qdrant_rest: RunningQdrant) -> Iterator[dict[str, object]]:
    collection = f"carnet_topology_{uuid.uuid4().hex[:8]}"
    with ExitStack() as stack:
        bao = stack.enter_context(transit_server(tmp_path / "bao"))
        client = bao.root()  # KV v2 is at secret/ in dev mode: the wrapped data keys go there
        env = _environment(tmp_path, postgres_dsn, qdrant_rest, collection, bao.url, bao.root_token, bao.ca_cert)
        plane = build_control_plane(_settings(env, tmp_path / "admin"))  # migrates the schemas once, first
        keys = {name: create_key(plane.catalog, plane.pepper, tenant=tenant, roles=[role])[0]
                for name, tenant, role in (("agent", TENANT, "agent"), ("dpo", TENANT, "dpo"),
                                           ("other", OTHER_TENANT, "agent"))}
        plane.catalog.close()
        stack.callback(_drop, qdrant_rest, collection)
        ports = free_port(), free_port()
        # All three start at once (each loads the embedder); the APIs are then waited for in turn.
        worker = _start(tmp_path / "worker", env, "worker", "--threads", "2")
        apis = [_start(tmp_path / f"api-{n}", env, "serve", "--port", str(port)) for n, port in enumerate(ports)]
        for proc in (worker, *apis):
            stack.callback(stop, proc)
        bases = [f"http://127.0.0.1:{port}" for port in ports]
        for base, proc in zip(bases, apis, strict=True):
            wait_ready(base, timeout=180, alive=lambda p=proc: p.poll() is None)
        yield {"a": bases[0], "b": bases[1], "keys": keys, "bao": client, "worker": worker, "dsn": postgres_dsn}


def _drop(qdrant: RunningQdrant, collection: str) -> None:
    client = QdrantClient(url=qdrant.url, api_key=qdrant.api_key, check_compatibility=False)
    try:
        if client.collection_exists(collection):
            client.delete_collection(collection)
    finally:
        client.close()


def _subject_keys(bao: object, tenant: str) -> set[str]:
    """The names of the tenant's wrapped subject keys in OpenBao's KV store (secret/carnet/data-keys/<tenant>/
    <subject hash>; the tenant's own keys, such as ``~tenant-hash-key``, start with ``~``)."""
    assert isinstance(bao, hvac.Client)
    try:
        listed = bao.secrets.kv.v2.list_secrets(f"carnet/data-keys/{tenant}", mount_point="secret")
    except hvac.exceptions.InvalidPath:
        return set()
    return {name for name in listed["data"]["keys"] if not name.startswith("~")}


def _client(base: object, key: str) -> httpx.Client:
    return httpx.Client(base_url=str(base), headers={"Authorization": f"Bearer {key}"}, timeout=60)


def test_two_apis_and_a_worker_share_every_store_and_an_erasure_holds_for_all(
        topology: dict[str, object]) -> None:
    keys = topology["keys"]
    assert isinstance(keys, dict)
    with ExitStack() as stack:
        on_a = stack.enter_context(_client(topology["a"], keys["agent"]))
        on_b = stack.enter_context(_client(topology["b"], keys["agent"]))
        dpo_a = stack.enter_context(_client(topology["a"], keys["dpo"]))
        dpo_b = stack.enter_context(_client(topology["b"], keys["dpo"]))
        other_a = stack.enter_context(_client(topology["a"], keys["other"]))

        written = on_a.post(f"/api/v1/subjects/{SUBJECT}/memories",
                            json={"text": "Le membre préfère être appelé le mardi matin."})
        assert written.status_code == 201, written.text
        found = on_b.post(f"/api/v1/subjects/{SUBJECT}/search", json={"query": "Quand l'appeler ?"}).json()
        assert [r["memory"]["text"] for r in found["results"]][:1] == ["Le membre préfère être appelé le mardi matin."]

        posted = on_b.post(f"/api/v1/subjects/{SUBJECT}/messages", json=CALL)
        assert posted.status_code == 202, posted.text
        done = on_a.get(f"/api/v1/intakes/{posted.json()['intake_id']}", params={"wait": "true", "timeout": 60})
        assert done.json()["status"] == "done", done.text  # only the worker extracts (the APIs run none)
        address = on_a.post(f"/api/v1/subjects/{SUBJECT}/search", json={"query": "Où habite-t-il ?"}).json()
        assert any("Strasbourg" in r["memory"]["text"] for r in address["results"]), address

        assert other_a.get(f"/api/v1/subjects/{SUBJECT}/memories").status_code == 404  # another tenant: nothing
        assert other_a.post(f"/api/v1/subjects/{SUBJECT}/search", json={"query": "Strasbourg"}).status_code == 404

        export = dpo_b.get(f"/api/v1/subjects/{SUBJECT}/export")
        assert export.status_code == 200 and "mardi matin" in export.text and "Strasbourg" in export.text

        assert len(_subject_keys(topology["bao"], TENANT)) == 1  # one key, whichever process asked first
        assert not _subject_keys(topology["bao"], OTHER_TENANT)  # the other tenant's reads created no subject
        receipt = dpo_a.delete(f"/api/v1/subjects/{SUBJECT}")
        assert receipt.status_code == 200 and receipt.json()["complete"], receipt.text
        assert receipt.json()["data_key_destroyed"]
        for api in (on_a, on_b):  # gone for both processes, whichever cached what
            assert api.post(f"/api/v1/subjects/{SUBJECT}/search", json={"query": "mardi"}).status_code == 404
            assert api.get(f"/api/v1/subjects/{SUBJECT}/memories").status_code == 404
        assert dpo_b.get(f"/api/v1/subjects/{SUBJECT}/export").status_code == 404
        assert not _subject_keys(topology["bao"], TENANT)  # destroyed in the KMS's store, not only in a cache

    dsn = topology["dsn"]
    assert isinstance(dsn, str)
    assert _count(dsn, "SELECT count(*) FROM carnet_erasures.entries") == 1
    assert _count(dsn, "SELECT count(*) FROM carnet.subjects") == 0
    assert _count(dsn, "SELECT count(*) FROM carnet.intakes WHERE status = 'done'") == 0  # erased with the subject
    worker = topology["worker"]
    assert isinstance(worker, subprocess.Popen) and worker.poll() is None  # it ran throughout
