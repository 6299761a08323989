"""A container built with ``CARNET_CATALOG=postgres`` serves the API through real HTTP: API keys,
the subject registry, history, intakes and the audit trail all live in PostgreSQL (nothing of the
control plane in the data dir), and erasure clears the subject's rows there."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest
from pydantic import SecretStr

from carnet.bootstrap.container import Container
from carnet.bootstrap.wiring import build, start_workers
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.server import running
from carnet.ports import Embedder
from carnet.services.apikeys import create_key
from carnet.settings.root import CatalogBackend, PostgresSettings, Settings
from tests.support.extractors import ScriptedExtractor

SUBJECT = "ADH-0042"
MESSAGES = {"session_id": "call-7", "messages": [
    {"role": "user", "content": "Mon IBAN est FR76 3000 6000 0112 3456 7890 189.", "at": "2026-11-29T09:12:00+01:00"}]}


@pytest.fixture
def pg_container(tmp_path: Path, embedder: Embedder, postgres_dsn: str) -> Iterator[Container]:
    settings = Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys", catalog=CatalogBackend.POSTGRES,
                        postgres=PostgresSettings(dsn=SecretStr(postgres_dsn), pool_size=3))
    c = build(settings, embedder=embedder)
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def http(pg_container: Container) -> Iterator[dict[str, httpx.Client]]:
    start_workers(pg_container, extractor=ScriptedExtractor())
    keys = {role: create_key(pg_container.deps.catalog, pg_container.pepper, tenant="assur-nord", roles=[role])[0]
            for role in ("agent", "dpo")}
    with running(create_app(pg_container)) as base:
        clients = {n: httpx.Client(base_url=base, headers={"Authorization": f"Bearer {k}"}, timeout=30)
                   for n, k in keys.items()}
        try:
            yield clients
        finally:
            for client in clients.values():
                client.close()


def _count(dsn: str, sql: str) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(sql.encode()).fetchone()
    assert row is not None
    return int(row[0])


def test_remember_search_intake_erase_on_postgres(http: dict[str, httpx.Client], pg_container: Container,
                                                  postgres_dsn: str) -> None:
    agent, dpo = http["agent"], http["dpo"]
    r = agent.post(f"/api/v1/subjects/{SUBJECT}/memories",
                   json={"text": "Le membre habite à Lyon 7e.", "occurred_at": "2024-01-15T10:00:00+01:00"})
    assert r.status_code == 201, r.text
    memory_id = r.json()["memory"]["id"]
    hits = agent.post(f"/api/v1/subjects/{SUBJECT}/search", json={"query": "Où habite le membre ?"}).json()
    assert hits["results"][0]["memory"]["text"] == "Le membre habite à Lyon 7e."
    history = dpo.get(f"/api/v1/subjects/{SUBJECT}/memories/{memory_id}/history").json()["history"]
    assert [h["action"] for h in history] == ["created"]

    intake = agent.post(f"/api/v1/subjects/{SUBJECT}/messages", json=MESSAGES)
    assert intake.status_code == 202
    done = agent.get(f"/api/v1/intakes/{intake.json()['intake_id']}", params={"wait": "true", "timeout": 10}).json()
    assert done["status"] == "done", done

    assert _count(postgres_dsn, "SELECT count(*) FROM carnet.api_keys") == 2
    assert _count(postgres_dsn, "SELECT count(*) FROM carnet.subjects") == 1
    assert _count(postgres_dsn, "SELECT count(*) FROM carnet.intakes WHERE status = 'done'") == 1
    assert not (pg_container.settings.data_dir / "catalog.sqlite3").exists()
    assert not (pg_container.settings.data_dir / "audit.sqlite3").exists()

    receipt = dpo.delete(f"/api/v1/subjects/{SUBJECT}").json()
    assert receipt["complete"] and receipt["data_key_destroyed"], receipt
    assert agent.post(f"/api/v1/subjects/{SUBJECT}/search", json={"query": "Lyon"}).status_code == 404
    for table in ("subjects", "history", "aliases", "pseudonyms", "intakes"):
        assert _count(postgres_dsn, f"SELECT count(*) FROM carnet.{table}") == 0, table

    verdict = dpo.get("/api/v1/audit/verify").json()
    assert verdict["ok"] is True
    actions = _count(postgres_dsn, "SELECT count(DISTINCT action) FROM carnet_audit.entries"
                                   " WHERE action IN ('memory.write', 'subject.erase', 'subject.erased')")
    assert actions == 3
    assert _count(postgres_dsn, "SELECT count(*) FROM carnet_audit.entries WHERE detail LIKE '%FR76%'"
                                " OR subject = 'ADH-0042'") == 0
