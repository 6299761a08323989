"""Team procedures over real HTTP: the routes, their roles and error codes, and the next
``assemble`` after an approval (and after a retirement), with the conflict flag in its JSON."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from carnet.bootstrap.container import Container
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.server import running
from carnet.services.apikeys import create_key

SUBJECT = "ADH-0077"
WATER = {"text": "Pour un dégât des eaux, toujours demander des photos avant d'envoyer l'expert.",
         "applies_when": ["dégât des eaux", "fuite"]}
EMAIL = {"text": "Pour une fuite, envoyer les documents de déclaration par e-mail.", "applies_when": ["fuite"]}
QUERY = {"subject_id": SUBJECT, "query": "Le membre appelle pour une fuite dans sa salle de bain"}


@pytest.fixture
def clients(container: Container) -> Iterator[dict[str, httpx.Client]]:
    def client(base: str, tenant: str, role: str) -> httpx.Client:
        key = create_key(container.deps.catalog, container.pepper, tenant=tenant, roles=[role])[0]
        return httpx.Client(base_url=base, timeout=30, headers={"Authorization": f"Bearer {key}"})

    with running(create_app(container)) as base:
        made = {role: client(base, "assur-nord", role) for role in ("agent", "supervisor", "admin")}
        made["other"] = client(base, "assur-sud", "supervisor")
        try:
            yield made
        finally:
            for c in made.values():
                c.close()


def test_propose_approve_and_see_it_in_the_next_assemble(clients: dict[str, httpx.Client]) -> None:
    agent, sup, admin = clients["agent"], clients["supervisor"], clients["admin"]
    r = agent.post(f"/api/v1/subjects/{SUBJECT}/memories", json={"text": "Le membre ne veut pas d'e-mail."})
    assert r.status_code == 201, r.text
    water = agent.post("/api/v1/procedures", json=WATER)
    assert water.status_code == 201, water.text
    pid = water.json()["id"]
    assert water.json()["status"] == "proposed" and water.json()["decided_by"] is None
    assert agent.post("/api/v1/procedures", json=WATER).json()["id"] == pid  # proposed once
    assert agent.get("/api/v1/procedures").json() == {"items": []}
    assert agent.get("/api/v1/procedures?status=proposed").status_code == 403
    assert [p["id"] for p in sup.get("/api/v1/procedures?status=proposed").json()["items"]] == [pid]
    assert agent.post("/api/v1/context/assemble", json=QUERY).json()["team_procedures"] == []

    for who in (agent, admin):
        r = who.post(f"/api/v1/procedures/{pid}/approve")
        assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden"
    assert clients["other"].post(f"/api/v1/procedures/{pid}/approve").status_code == 404
    approved = sup.post(f"/api/v1/procedures/{pid}/approve")
    assert approved.status_code == 200 and approved.json()["status"] == "approved"
    again = sup.post(f"/api/v1/procedures/{pid}/approve")
    assert again.status_code == 409 and again.json()["error"] == {
        "code": "procedure_state", "message": again.json()["error"]["message"], "procedure_id": pid,
        "status": "approved"}

    ctx = agent.post("/api/v1/context/assemble", json=QUERY).json()
    assert [(t["id"], t["conflict"]) for t in ctx["team_procedures"]] == [(pid, False)]
    assert WATER["text"] in ctx["prompt"] and ctx["stats"]["team_procedures"] == 1

    email = sup.post("/api/v1/procedures", json=EMAIL).json()["id"]
    sup.post(f"/api/v1/procedures/{email}/approve")
    ctx = agent.post("/api/v1/context/assemble", json=QUERY).json()
    flagged = {t["id"]: t for t in ctx["team_procedures"]}[email]
    assert flagged["conflict"] is True
    assert flagged["conflicts"] == [{"channel": "email", "constraint": "Le membre ne veut pas d'e-mail."}]
    assert "⚠ en conflit avec une contrainte du membre : « Le membre ne veut pas d'e-mail. »" in ctx["prompt"]

    assert sup.post(f"/api/v1/procedures/{pid}/retire").json()["status"] == "retired"
    ctx = agent.post("/api/v1/context/assemble", json=QUERY).json()
    assert [t["id"] for t in ctx["team_procedures"]] == [email]


def test_refusals_have_machine_readable_codes(clients: dict[str, httpx.Client]) -> None:
    sup = clients["supervisor"]
    r = sup.post("/api/v1/procedures", json={"text": "Rappeler Mme Martine Durand au 06 12 34 56 78."})
    assert r.status_code == 400 and r.json()["error"]["code"] == "procedure_personal_data"
    assert "PHONE" in r.json()["error"]["kinds"] and "06 12" not in r.text
    unknown = sup.post("/api/v1/procedures/00000000-0000-4000-8000-000000000000/reject")
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "procedure_not_found"
    assert sup.post("/api/v1/procedures", json={"text": "ok", "extra": 1}).status_code == 400
    assert sup.get("/api/v1/procedures?status=bogus").status_code == 400
    rejected = sup.post("/api/v1/procedures", json={"text": "Pour un vol, porter plainte d'abord."}).json()["id"]
    assert sup.post(f"/api/v1/procedures/{rejected}/reject").json()["status"] == "rejected"
    assert sup.post(f"/api/v1/procedures/{rejected}/retire").json()["error"]["code"] == "procedure_state"


def test_openapi_documents_the_routes(clients: dict[str, httpx.Client]) -> None:
    spec = clients["agent"].get("/openapi.json").json()
    one = "/api/v1/procedures/{procedure_id}"
    assert {"/api/v1/procedures", one, f"{one}/approve", f"{one}/reject", f"{one}/retire"} <= set(spec["paths"])
    assert "team_procedures" in spec["components"]["schemas"]["ContextOut"]["properties"]


def test_only_a_supervisor_hands_on_the_supervisor_role(clients: dict[str, httpx.Client]) -> None:
    # An admin alone cannot approve procedures, so it cannot mint a key that does (tests/security/test_key_grants.py).
    refused = clients["admin"].post("/api/v1/admin/apikeys", json={"roles": ["supervisor"], "name": "chef-equipe"})
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
    assert clients["admin"].post("/api/v1/admin/apikeys", json={"roles": ["boss"]}).status_code == 400
