"""Access logs carry the route template, never the subject id in the path, the text or the query."""

from __future__ import annotations

import httpx
import pytest

from carnet.bootstrap.container import Container
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.server import running
from carnet.logs import configure
from carnet.services.apikeys import create_key


def test_logs_hold_no_subject_id_text_or_query(container: Container, capfd: pytest.CaptureFixture[str]) -> None:
    configure("INFO")  # the configuration `carnet serve` uses
    key, _ = create_key(container.deps.catalog, container.pepper, tenant="t1", roles=["agent"])
    subject = "NIR-1850775123456"
    with running(create_app(container)) as base, httpx.Client(
        base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=30
    ) as api:
        r = api.post(f"/api/v1/subjects/{subject}/memories", json={"text": "Le membre s'appelle Zéphyrin Quarteron."})
        assert r.status_code == 201
        api.post(f"/api/v1/subjects/{subject}/search", json={"query": "Quarteron adresse", "k": 3})
        api.post("/api/v1/context/assemble", json={"subject_id": subject, "query": "Zéphyrin"})
        api.get(f"/api/v1/subjects/{subject}/memories/00000000-0000-4000-8000-000000000000")
    out = capfd.readouterr()
    logs = out.out + out.err
    assert "/api/v1/subjects/{subject_id}/memories" in logs, repr(logs[:500])
    assert "/api/v1/context/assemble" in logs
    for secret in (subject, "Zéphyrin", "Quarteron", key):
        assert secret not in logs
