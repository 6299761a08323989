"""End to end through real HTTP: uvicorn on loopback, the embedded stack behind it. The tests speak
HTTP only, through the fixtures ``client_for`` and ``api``: tests/e2e/test_soak.py runs them again on
the production topology with fixtures of the same names."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest

from carnet.bootstrap.container import Container
from tests.support.clients import clients_for

SUBJECT = "ADH-0042"


@pytest.fixture
def client_for(container: Container) -> Iterator[Callable[..., httpx.Client]]:
    """``client_for(*roles)``: a client of one server on the embedded stack, with a new key of
    assur-nord for those roles."""
    with clients_for(container) as client:
        yield client


@pytest.fixture
def api(client_for: Callable[..., httpx.Client]) -> httpx.Client:
    return client_for("agent", "dpo")


def _remember(api: httpx.Client, text: str, at: str, **extra: object) -> dict[str, object]:
    r = api.post(f"/api/v1/subjects/{SUBJECT}/memories", json={"text": text, "occurred_at": at, **extra})
    assert r.status_code == 201, r.text
    body: dict[str, object] = r.json()
    return body


def test_remember_supersede_search_assemble(api: httpx.Client) -> None:
    first = _remember(api, "Le membre habite à Lyon 7e.", "2024-01-15T10:00:00+01:00")
    assert first["action"] == "created"
    _remember(api, "Le membre préfère être contacté par email.", "2024-01-15T10:01:00+01:00")
    moved = _remember(api, "Le membre habite maintenant à Villeurbanne.", "2024-06-10T14:00:00+02:00")
    old_id = first["memory"]["id"]  # type: ignore[index]
    assert moved["action"] == "superseded" and moved["superseded"] == [old_id]

    old = api.get(f"/api/v1/subjects/{SUBJECT}/memories/{old_id}").json()
    assert old["status"] == "superseded" and old["superseded_by"] == moved["memory"]["id"]  # type: ignore[index]
    assert old["valid_to"] is not None

    hits = api.post(f"/api/v1/subjects/{SUBJECT}/search", json={"query": "Où habite le membre ?", "k": 3}).json()
    texts = [h["memory"]["text"] for h in hits["results"]]
    assert texts[0] == "Le membre habite maintenant à Villeurbanne."
    assert "Le membre habite à Lyon 7e." not in texts
    assert set(hits["results"][0]["signals"]) >= {"cosine", "relevance", "importance", "recency"}

    ctx = api.post("/api/v1/context/assemble", json={"subject_id": SUBJECT, "query": "adresse du membre"}).json()
    assert "Villeurbanne" in ctx["prompt"] and "Lyon" not in ctx["prompt"]
    assert ctx["stats"]["count"] >= 1 and ctx["stats"]["top_score"] > 0

    history = api.get(f"/api/v1/subjects/{SUBJECT}/memories/{old_id}/history").json()["history"]
    assert [h["action"] for h in history] == ["created", "superseded"]


def test_replayed_write_changes_nothing(api: httpx.Client) -> None:
    headers = {"Idempotency-Key": "call-77-turn-3"}
    body = {"text": "Le membre a un contrat auto formule Tiers.", "occurred_at": "2024-02-01T09:00:00Z"}
    a = api.post(f"/api/v1/subjects/{SUBJECT}/memories", json=body, headers=headers).json()
    b = api.post(f"/api/v1/subjects/{SUBJECT}/memories", json=body, headers=headers).json()
    assert a["action"] == "created" and b["action"] == "unchanged"
    assert a["memory"]["id"] == b["memory"]["id"]
    assert b["memory"]["reinforcement_count"] == 0


def test_duplicate_merges_and_reinforces_once(api: httpx.Client) -> None:
    a = _remember(api, "Le membre a un contrat habitation formule Confort depuis 2019.", "2024-01-15T10:00:00Z")
    b = _remember(api, "Le membre a un contrat habitation Confort depuis 2019.", "2024-03-01T10:00:00Z")
    assert b["action"] == "merged" and b["merged_into"] == a["memory"]["id"]  # type: ignore[index]
    assert b["memory"]["reinforcement_count"] == 1  # type: ignore[index]
    again = _remember(api, "Le membre a un contrat habitation Confort depuis 2019.", "2024-03-01T10:00:00Z")
    assert again["action"] == "unchanged" and again["memory"]["reinforcement_count"] == 1  # type: ignore[index]


def test_list_and_paging(api: httpx.Client) -> None:
    texts = [
        "Le membre a un chien de race labrador.",
        "Son fils entre au lycée en septembre.",
        "Il possède une résidence secondaire en Bretagne.",
        "Elle pratique l'escalade le week-end.",
        "Le véhicule principal est une Renault Zoé électrique.",
        "Il a demandé un échéancier pour la cotisation de mars.",
        "La cliente travaille comme infirmière de nuit.",
    ]
    r = api.post(f"/api/v1/subjects/{SUBJECT}/memories", json={"memories": [{"text": t} for t in texts]})
    assert r.status_code == 201
    seen: list[str] = []
    cursor = None
    while True:
        params: dict[str, str | int] = {"limit": 3}
        if cursor:
            params["cursor"] = cursor
        page = api.get(f"/api/v1/subjects/{SUBJECT}/memories", params=params).json()
        seen += [m["id"] for m in page["items"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert len(seen) == len(set(seen)) == 7
    everything = api.get(f"/api/v1/subjects/{SUBJECT}/memories", params={"limit": 500}).json()
    assert {m["id"] for m in everything["items"]} == set(seen) and everything["next_cursor"] is None


def test_metrics_and_health(api: httpx.Client) -> None:
    assert api.get("/healthz").json() == {"status": "ok"}
    ready = api.get("/readyz").json()
    assert ready["status"] == "ready" and set(ready["checks"].values()) == {"ok"}
    assert {"vector_store", "catalog", "kms", "audit"} <= set(ready["checks"])
    assert "carnet_query_cache_misses_total" in api.get("/metrics").text


def test_lookup_by_identifier_over_http(api: httpx.Client) -> None:
    _remember(api, "Le membre conteste le dossier RC-2031-0007 (bris de glace).", "2024-03-01T10:00:00+01:00")
    _remember(api, "Le membre préfère être appelé le matin.", "2024-03-01T10:01:00+01:00")
    r = api.post(f"/api/v1/subjects/{SUBJECT}/memories/lookup", json={"identifier": "rc 2031 0007"})
    assert r.status_code == 200, r.text
    assert [m["text"] for m in r.json()["items"]] == ["Le membre conteste le dossier RC-2031-0007 (bris de glace)."]
    bad = api.post(f"/api/v1/subjects/{SUBJECT}/memories/lookup", json={"identifier": " - "})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_input"
    unknown = api.post(f"/api/v1/subjects/{SUBJECT}/memories/lookup", json={"id": "x"})
    assert unknown.status_code == 400 and unknown.json()["error"]["code"] == "invalid_request"


def test_special_categories_are_flagged_and_hidden_from_agent_keys(
        client_for: Callable[..., httpx.Client]) -> None:
    agent, dpo = client_for("agent"), client_for("agent", "dpo")
    url = "/api/v1/subjects/ADH-0900/memories"
    religious = agent.post(url, json={"text": "Le membre ne peut pas venir pendant le ramadan."})
    health = agent.post(url, json={"text": "Le membre est hospitalisé pour une opération du genou."})
    assert religious.status_code == health.status_code == 201
    assert religious.json()["memory"]["special_categories"] == ["religion"]
    assert health.json()["memory"]["special_categories"] == ["health"]
    rid = religious.json()["memory"]["id"]

    def texts(client: httpx.Client) -> list[str]:
        return sorted(m["text"] for m in client.get(url).json()["items"])

    assert texts(agent) == ["Le membre est hospitalisé pour une opération du genou."]
    assert len(texts(dpo)) == 2
    assert agent.get(f"{url}/{rid}").status_code == 404
    assert dpo.get(f"{url}/{rid}").status_code == 200
    query = {"query": "Quand le membre est-il indisponible pendant le ramadan ?", "k": 5}
    seen_by_agent = agent.post("/api/v1/subjects/ADH-0900/search", json=query).json()["results"]
    assert rid not in [r["memory"]["id"] for r in seen_by_agent]
    seen_by_dpo = dpo.post("/api/v1/subjects/ADH-0900/search", json=query).json()["results"]
    assert rid in [r["memory"]["id"] for r in seen_by_dpo]
    ctx = agent.post("/api/v1/context/assemble", json={"subject_id": "ADH-0900", "query": "Que sait-on du membre ?"})
    assert "ramadan" not in ctx.json()["prompt"]
