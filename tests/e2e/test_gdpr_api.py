"""The data subject's rights over real HTTP: export (art. 15/20), rectification (art. 16), erasure
(art. 17), and what the audit trail keeps of them (no personal data). The tests that speak HTTP only
(through the fixtures ``tenant`` and ``http``) run again on the production topology in
tests/e2e/test_soak.py, with fixtures of the same names."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from carnet.bootstrap.container import Container
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.server import running
from carnet.services.apikeys import create_key

SUBJECT = "ADH-7731"
TEXTS = [
    "Le membre habite à Lyon 7e.",
    "Le membre préfère être contacté par email.",
    "Sinistre dégât des eaux SIN-2024-0815 ouvert le 3 mars, expert mandaté.",
    "Mme Laurence Vasseur a demandé un échéancier ; son IBAN est FR76 3000 6000 0112 3456 7890 189.",
]


@pytest.fixture
def tenant() -> str:
    return "assur-nord"


@pytest.fixture
def keys(container: Container, tenant: str) -> dict[str, str]:
    def key(*roles: str) -> str:
        return create_key(container.deps.catalog, container.pepper, tenant=tenant, roles=list(roles))[0]

    return {"agent": key("agent"), "dpo": key("dpo"), "admin": key("admin")}


@pytest.fixture
def http(container: Container, keys: dict[str, str]) -> Iterator[dict[str, httpx.Client]]:
    with running(create_app(container)) as base:
        clients = {role: httpx.Client(base_url=base, headers={"Authorization": f"Bearer {k}"}, timeout=30)
                   for role, k in keys.items()}
        try:
            yield clients
        finally:
            for c in clients.values():
                c.close()


def _store(agent: httpx.Client) -> list[dict[str, Any]]:
    made = []
    for text in TEXTS:
        r = agent.post(f"/api/v1/subjects/{SUBJECT}/memories", json={"text": text, "category": "note"})
        assert r.status_code == 201, r.text
        made.append(r.json()["memory"])
    moved = agent.post(f"/api/v1/subjects/{SUBJECT}/memories",
                       json={"text": "Le membre habite maintenant à Villeurbanne."})
    assert moved.json()["action"] == "superseded"
    made.append(moved.json()["memory"])
    return made


def test_export_returns_everything_stored_decrypted_with_history(http: dict[str, httpx.Client]) -> None:
    made = _store(http["agent"])
    r = http["dpo"].get(f"/api/v1/subjects/{SUBJECT}/export")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    doc = r.json()
    assert doc["format"] == "carnet.export.v1" and doc["subject_id"] == SUBJECT and doc["count"] == len(made)
    by_id = {rec["memory"]["id"]: rec for rec in doc["records"]}
    assert set(by_id) == {m["id"] for m in made}
    for m in made:
        exported = by_id[m["id"]]
        assert exported["memory"]["text"] == m["text"]  # decrypted, PII included: it is the subject's own data
        assert exported["memory"]["sources"] and exported["history"][0]["action"] == "created"
    lyon = by_id[made[0]["id"]]
    assert lyon["memory"]["status"] == "superseded" and [h["action"] for h in lyon["history"]] == [
        "created", "superseded"]


def test_unknown_subject_export_and_erase_are_404(http: dict[str, httpx.Client]) -> None:
    assert http["dpo"].get("/api/v1/subjects/NOBODY-1/export").status_code == 404
    assert http["dpo"].delete("/api/v1/subjects/NOBODY-1").json()["error"]["code"] == "subject_not_found"


def test_erasure_leaves_nothing_and_the_audit_names_no_one(http: dict[str, httpx.Client]) -> None:
    _store(http["agent"])
    receipt = http["dpo"].delete(f"/api/v1/subjects/{SUBJECT}").json()
    assert receipt["complete"] and receipt["records_deleted"] == len(TEXTS) + 1 and receipt["data_key_destroyed"]
    assert SUBJECT not in str(receipt)
    assert http["dpo"].get(f"/api/v1/subjects/{SUBJECT}/export").status_code == 404
    search = http["agent"].post(f"/api/v1/subjects/{SUBJECT}/search", json={"query": "adresse du membre"})
    assert search.status_code == 404
    listed = http["agent"].get(f"/api/v1/subjects/{SUBJECT}/memories")
    assert listed.status_code == 404

    lines = http["dpo"].get("/api/v1/audit").text.splitlines()
    trail = "\n".join(lines)
    actions = [line.split('"action": "')[1].split('"')[0] for line in lines]
    assert "subject.erase" in actions and "subject.erased" in actions and "memory.write" in actions
    for secret in (SUBJECT, "Vasseur", "FR76", "Lyon", "SIN-2024-0815"):
        assert secret not in trail
    assert http["dpo"].get("/api/v1/audit/verify").json()["ok"] is True


def test_rectification_reembeds_and_forgets_the_old_text(http: dict[str, httpx.Client]) -> None:
    made = _store(http["agent"])
    target = made[1]["id"]
    patched = http["dpo"].patch(f"/api/v1/subjects/{SUBJECT}/memories/{target}",
                                json={"text": "Le membre préfère être contacté par courrier postal.",
                                      "importance": 0.9})
    assert patched.status_code == 200, patched.text
    assert patched.json()["text"].endswith("courrier postal.") and patched.json()["importance"] == 0.9
    hits = http["agent"].post(f"/api/v1/subjects/{SUBJECT}/search",
                              json={"query": "courrier postal", "k": 1}).json()["results"]
    assert hits[0]["memory"]["id"] == target  # found through its new embedding and keywords
    export = http["dpo"].get(f"/api/v1/subjects/{SUBJECT}/export").text
    assert "par email" not in export  # the old text is nowhere
    history = http["dpo"].get(f"/api/v1/subjects/{SUBJECT}/memories/{target}/history").json()["history"]
    assert history[-1]["action"] == "rectified" and history[-1]["detail"] == {"fields": "text,importance"}
    assert "courrier" not in str(history)


def test_rectified_pii_is_pseudonymised_again(http: dict[str, httpx.Client], container: Container) -> None:
    made = _store(http["agent"])
    target = made[0]["id"]
    http["dpo"].patch(f"/api/v1/subjects/{SUBJECT}/memories/{target}",
                      json={"text": "M. Gérard Poulain habite au 12 rue des Lilas à Lyon."})
    scope = container.deps.hasher.subject_hash("assur-nord", SUBJECT)
    from carnet.domain.records import Scope

    stored = container.deps.index.get(Scope("assur-nord", scope), [target])[0]
    assert "Poulain" in stored.text and "Poulain" not in stored.pseudo_text


def test_forget_one_memory(http: dict[str, httpx.Client]) -> None:
    made = _store(http["agent"])
    target = made[2]["id"]
    assert http["agent"].delete(f"/api/v1/subjects/{SUBJECT}/memories/{target}").status_code == 204
    assert http["agent"].get(f"/api/v1/subjects/{SUBJECT}/memories/{target}").status_code == 404
    assert http["agent"].delete(f"/api/v1/subjects/{SUBJECT}/memories/{target}").status_code == 404
    history = http["dpo"].get(f"/api/v1/subjects/{SUBJECT}/memories/{made[3]['id']}/history")
    assert history.status_code == 200
    nothing = http["agent"].post(f"/api/v1/subjects/{SUBJECT}/memories/lookup", json={"identifier": "SIN-2024-0815"})
    assert nothing.json()["items"] == []


def test_rectify_needs_a_field_and_valid_values(http: dict[str, httpx.Client]) -> None:
    made = _store(http["agent"])
    url = f"/api/v1/subjects/{SUBJECT}/memories/{made[0]['id']}"
    assert http["dpo"].patch(url, json={}).json()["error"]["code"] == "invalid_input"
    assert http["dpo"].patch(url, json={"importance": 3}).status_code == 400
    assert http["dpo"].patch(url, json={"retention": "no-such-class"}).json()["error"]["code"] == "invalid_input"


def test_legal_hold_blocks_erasure_until_lifted(http: dict[str, httpx.Client]) -> None:
    _store(http["agent"])
    held = http["dpo"].put(f"/api/v1/subjects/{SUBJECT}/legal-hold", json={"reference": "LIT-2026-0042"})
    assert held.status_code == 200 and held.json()["legal_hold"] is True
    refused = http["dpo"].delete(f"/api/v1/subjects/{SUBJECT}")
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "legal_hold"
    assert http["dpo"].get(f"/api/v1/subjects/{SUBJECT}/export").json()["count"] == len(TEXTS) + 1
    assert http["dpo"].put(f"/api/v1/subjects/{SUBJECT}/legal-hold",
                           json={"reference": "Mme Vasseur"}).status_code == 400  # free text could be personal data
    assert http["dpo"].delete(f"/api/v1/subjects/{SUBJECT}/legal-hold").json()["legal_hold"] is False
    assert http["dpo"].delete(f"/api/v1/subjects/{SUBJECT}").json()["complete"] is True
    lines = http["dpo"].get("/api/v1/audit").text.splitlines()
    actions = [line.split('"action": "')[1].split('"')[0] for line in lines]
    assert actions.index("subject.hold") < actions.index("subject.release") < actions.index("subject.erased")


def test_relationship_end_and_maintain_over_rest(http: dict[str, httpx.Client], tenant: str) -> None:
    _store(http["agent"])
    ended = http["dpo"].put(f"/api/v1/subjects/{SUBJECT}/relationship-end", json={"ended_at": "2020-01-31T00:00:00Z"})
    assert ended.status_code == 200 and ended.json()["relationship_end"].startswith("2020-01-31")
    assert http["dpo"].get(f"/api/v1/subjects/{SUBJECT}/retention").json()["relationship_end"].startswith("2020")
    assert http["dpo"].put(f"/api/v1/subjects/{SUBJECT}/relationship-end",
                           json={"ended_at": "2020-01-31T00:00:00"}).status_code == 400  # no time zone
    report = http["admin"].post("/api/v1/admin/maintain", json={"dry_run": True})
    assert report.status_code == 200, report.text
    body = report.json()
    assert body["dry_run"] is True and set(body["tenants"]) <= {tenant}
    assert SUBJECT not in report.text
