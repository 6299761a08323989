"""`POST …/messages` answers 202 at once; `GET /intakes/{id}?wait=true` reads one's own writes."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from carnet.bootstrap.container import Container
from carnet.bootstrap.wiring import start_workers
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.server import running
from carnet.services.apikeys import create_key
from tests.support.extractors import ScriptedExtractor

BODY = {"session_id": "call-42", "messages": [
    {"role": "user", "content": "Bonjour, j'ai un dégât des eaux dans la cuisine.", "at": "2026-11-29T09:12:00+01:00"},
    {"role": "advisor", "content": "Je déclare le sinistre, un expert passera jeudi.",
     "at": "2026-11-29T09:13:00+01:00"}]}


@pytest.fixture
def http(container: Container) -> Iterator[dict[str, httpx.Client]]:
    start_workers(container, extractor=ScriptedExtractor())
    keys = {name: create_key(container.deps.catalog, container.pepper, tenant=tenant, roles=roles)[0]
            for name, tenant, roles in (("agent", "assur-nord", ["agent"]), ("dpo", "assur-nord", ["dpo"]),
                                        ("other", "banque-sud", ["agent"]))}
    with running(create_app(container)) as base:
        clients = {n: httpx.Client(base_url=base, headers={"Authorization": f"Bearer {k}"}, timeout=30)
                   for n, k in keys.items()}
        try:
            yield clients
        finally:
            for c in clients.values():
                c.close()


def test_messages_are_accepted_then_searchable(http: dict[str, httpx.Client]) -> None:
    r = http["agent"].post("/api/v1/subjects/ADH-9/messages", json=BODY, headers={"Idempotency-Key": "call-42-1"})
    assert r.status_code == 202 and r.json()["status"] == "pending"
    iid = r.json()["intake_id"]
    again = http["agent"].post("/api/v1/subjects/ADH-9/messages", json=BODY, headers={"Idempotency-Key": "call-42-1"})
    assert again.status_code == 202 and again.json()["intake_id"] == iid
    done = http["agent"].get(f"/api/v1/intakes/{iid}", params={"wait": "true", "timeout": 10}).json()
    assert done["status"] == "done" and len(done["memory_ids"]) == 1 and done["attempts"] == 1
    hits = http["agent"].post("/api/v1/subjects/ADH-9/search", json={"query": "dégât des eaux"}).json()["results"]
    assert hits[0]["memory"]["id"] == done["memory_ids"][0]
    assert hits[0]["memory"]["sources"][0] == {"kind": "intake", "ref": iid, "session_id": "call-42"}
    assert http["dpo"].get(f"/api/v1/intakes/{iid}").json()["status"] == "done"


def test_intakes_are_the_tenants_own_and_bodies_are_checked(http: dict[str, httpx.Client]) -> None:
    iid = http["agent"].post("/api/v1/subjects/ADH-10/messages", json=BODY).json()["intake_id"]
    r = http["other"].get(f"/api/v1/intakes/{iid}")
    assert r.status_code == 404 and r.json()["error"]["code"] == "intake_not_found"
    assert http["dpo"].post("/api/v1/subjects/ADH-10/messages", json=BODY).status_code == 403
    bad = http["agent"].post("/api/v1/subjects/ADH-10/messages",
                             json={"messages": [{"role": "robot", "content": "Mon IBAN est FR76 3000"}]})
    assert bad.status_code == 400 and "robot" not in bad.text and "FR76" not in bad.text  # never echoed
    naive = http["agent"].post("/api/v1/subjects/ADH-10/messages",
                               json={"messages": [{"role": "user", "content": "x", "at": "2026-11-29T09:00:00"}]})
    assert naive.status_code == 400
    assert http["agent"].post("/api/v1/subjects/ADH-10/messages", json={"messages": []}).status_code == 400


def test_a_sessions_next_post_is_read_after_its_earlier_one_by_default(http: dict[str, httpx.Client]) -> None:
    """As `carnet serve` wires its workers (``CARNET_WORKERS__SESSION_CONTEXT_MINUTES`` at its default): the
    second post of a session is read after the first one's two messages, another session's post alone."""
    for body in (BODY, BODY, {**BODY, "session_id": "call-43"}):
        iid = http["agent"].post("/api/v1/subjects/ADH-12/messages", json=body).json()["intake_id"]
        assert http["agent"].get(f"/api/v1/intakes/{iid}", params={"wait": "true"}).json()["status"] == "done"
    text = http["agent"].get("/metrics").text
    assert "carnet_intake_context_messages_count 3.0" in text and "carnet_intake_context_messages_sum 2.0" in text


def test_queue_and_extraction_metrics(http: dict[str, httpx.Client]) -> None:
    iid = http["agent"].post("/api/v1/subjects/ADH-11/messages", json=BODY).json()["intake_id"]
    assert http["agent"].get(f"/api/v1/intakes/{iid}", params={"wait": "true"}).json()["status"] == "done"
    text = http["agent"].get("/metrics").text
    for line in ('carnet_intakes{state="pending"} 0.0', 'carnet_intakes{state="dead"} 0.0',
                 'carnet_intakes_finished_total{outcome="done"} 1.0',
                 'carnet_extraction_duration_seconds_count{extractor="scripted",outcome="ok"} 1.0',
                 'carnet_extraction_tokens_total{direction="in",extractor="scripted"} 20.0',
                 "carnet_intake_to_done_seconds_count 1.0", "carnet_intake_oldest_pending_seconds 0.0"):
        assert line in text, line
    assert "ADH-11" not in text
