"""The service on a real OpenBao (Transit), through HTTP: fail closed and recover; rotate while serving.

The KMS is made unreachable by freezing its process (SIGSTOP): calls hang until the client's timeout,
as with a network partition. Keys already cached keep serving; anything that needs the KMS answers
503 ``kms_unavailable`` and writes nothing; when the KMS comes back (SIGCONT) service resumes."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from carnet.bootstrap.wiring import build
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.server import running
from carnet.ports import Embedder
from carnet.services.apikeys import create_key
from carnet.settings.root import Settings
from tests.support.openbao import Bao, transit_server


@pytest.fixture
def bao(tmp_path: Path) -> Iterator[Bao]:
    with transit_server(tmp_path / "bao") as server:
        yield server


def _settings(bao: Bao, tmp_path: Path, *, timeout: float, key_store: str = "file") -> Settings:
    return Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys", kms_backend="vault", key_store=key_store,
                    vault={"url": bao.url, "auth": "token", "token": bao.root_token, "ca_cert": bao.ca_cert,
                           "timeout": timeout})


@pytest.mark.parametrize("key_store", ["file", "vault"])
def test_kms_outage_fails_closed_and_recovers(bao: Bao, tmp_path: Path, embedder: Embedder, key_store: str) -> None:
    """With the wrapped keys in files or in Vault KV v2 (then the outage takes both away at once)."""
    settings = _settings(bao, tmp_path, timeout=1.0, key_store=key_store)
    c = build(settings, embedder=embedder)
    key, _ = create_key(c.deps.catalog, c.pepper, tenant="banque", roles=["agent"])
    try:
        with running(create_app(c)) as base, httpx.Client(
            base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=30
        ) as api:
            assert api.post("/api/v1/subjects/KNOWN/memories", json={"text": "Le client a un PEA."}).status_code == 201
            assert bao.process is not None
            os.killpg(bao.process.pid, signal.SIGSTOP)  # the KMS stops answering
            try:
                # a subject whose key is cached is still served
                r = api.post("/api/v1/subjects/KNOWN/search", json={"query": "PEA", "k": 3})
                assert r.status_code == 200 and r.json()["results"]
                # a new subject needs a data key from the KMS: 503 with the clear code, nothing written
                r = api.post("/api/v1/subjects/NEW/memories", json={"text": "Le client a un livret A."})
                assert r.status_code == 503 and r.json()["error"]["code"] == "kms_unavailable"
                assert api.get("/readyz").status_code == 503
            finally:
                os.killpg(bao.process.pid, signal.SIGCONT)  # the KMS is back
            assert api.get("/api/v1/subjects/NEW/memories").status_code == 404  # nothing was written
            r = api.post("/api/v1/subjects/NEW/memories", json={"text": "Le client a un livret A."})
            assert r.status_code == 201
            assert api.get("/readyz").status_code == 200
    finally:
        c.close()


@pytest.mark.parametrize("key_store", ["file", "vault"])
def test_rotation_and_rewrap_while_serving(bao: Bao, tmp_path: Path, embedder: Embedder, key_store: str) -> None:
    """`keys rotate` + `keys rewrap` (another process's keyring on the same KMS and key store) while the
    server answers: reads never stop, and after the old version is retired fresh unwraps still work."""
    from carnet.bootstrap.keys import build_keyring, build_kms
    from carnet.crypto.keyring import Keyring
    from carnet.services.lifecycle.keys import rewrap, rotate

    settings = _settings(bao, tmp_path, timeout=5.0, key_store=key_store)
    c = build(settings, embedder=embedder)
    key, _ = create_key(c.deps.catalog, c.pepper, tenant="banque", roles=["agent"])
    try:
        with running(create_app(c)) as base, httpx.Client(
            base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=30
        ) as api:
            for n in range(3):
                r = api.post(f"/api/v1/subjects/C{n}/memories", json={"text": f"Le client {n} a un PEA."})
                assert r.status_code == 201
            admin_kms = build_kms(settings)
            assert rotate(admin_kms, tenant="banque") == 2
            result = rewrap(admin_kms, build_keyring(settings, admin_kms), tenant="banque", retire=True)
            assert (result.rewrapped, result.skipped, result.retired_below) == (4, 0, 2)  # 3 subjects + hash key
            assert api.post("/api/v1/subjects/C0/search", json={"query": "PEA", "k": 1}).status_code == 200
            assert isinstance(c.deps.keys, Keyring)
            c.deps.keys.forget_tenant("banque")  # as the 5-minute TTL would: unwrap again, now under v2
            for n in range(3):
                r = api.post(f"/api/v1/subjects/C{n}/search", json={"query": "PEA", "k": 1})
                assert r.status_code == 200 and r.json()["results"][0]["memory"]["text"] == f"Le client {n} a un PEA."
    finally:
        c.close()
