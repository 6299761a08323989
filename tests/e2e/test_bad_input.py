"""Bad input gets a clear 4xx with a machine-readable code: never a 500, never a partial write."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from carnet.bootstrap.container import Container
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.server import running
from carnet.services.apikeys import create_key

S = "ADH-1"


@pytest.fixture
def api(container: Container) -> Iterator[httpx.Client]:
    key, _ = create_key(container.deps.catalog, container.pepper, tenant="t1", roles=["agent"])
    with running(create_app(container)) as base, httpx.Client(
        base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=30
    ) as client:
        yield client


def _code(r: httpx.Response) -> str:
    return str(r.json()["error"]["code"])


@pytest.mark.parametrize(
    "body",
    [
        {"text": ""},
        {"text": "   "},
        {"text": "x" * 8001},
        {"text": "ok", "kind": "dream"},
        {"text": "ok", "importance": 2},
        {"text": "ok", "occurred_at": "yesterday"},
        {"text": "ok", "occurred_at": "2024-01-01T10:00:00"},  # no time zone
        {"memories": []},
        {},
    ],
)
def test_bad_memory_bodies(api: httpx.Client, body: dict[str, object]) -> None:
    r = api.post(f"/api/v1/subjects/{S}/memories", json=body)
    assert r.status_code == 400, r.text
    assert _code(r) in {"invalid_request", "invalid_input"}
    assert "x" * 100 not in r.text  # never echoes the rejected input


def test_batch_with_one_bad_item_writes_nothing(api: httpx.Client) -> None:
    body = {"memories": [{"text": "Le membre a un chat."}, {"text": "   "}]}
    r = api.post(f"/api/v1/subjects/{S}/memories", json=body)
    assert r.status_code == 400 and _code(r) == "invalid_input" and r.json()["error"]["index"] == 1
    assert api.get(f"/api/v1/subjects/{S}/memories").status_code == 404


def test_malformed_json_and_ids(api: httpx.Client) -> None:
    r = api.post(f"/api/v1/subjects/{S}/memories", content=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 400
    assert api.get(f"/api/v1/subjects/{S}/memories/not-a-uuid").status_code == 400
    assert api.get("/api/v1/subjects/bad%20id!/memories").status_code == 400
    r = api.get(f"/api/v1/subjects/{S}/memories/6f1c0f4e-3f0b-4a43-9a1d-2d9f4b8a6b11")
    assert r.status_code == 404 and _code(r) == "memory_not_found"


def test_unknown_subject(api: httpx.Client) -> None:
    r = api.post("/api/v1/context/assemble", json={"subject_id": "NOBODY", "query": "adresse"})
    assert r.status_code == 404 and _code(r) == "subject_not_found"
    assert "NOBODY" not in r.text


@pytest.mark.parametrize("budgets", [{"max_memories": 0}, {"memories_tokens": -5}, {"min_relevance": 3}])
def test_bad_budgets(api: httpx.Client, budgets: dict[str, int]) -> None:
    api.post(f"/api/v1/subjects/{S}/memories", json={"text": "Le membre a un chat."})
    r = api.post("/api/v1/context/assemble", json={"subject_id": S, "query": "animal", "budgets": budgets})
    assert r.status_code == 400 and _code(r) == "invalid_budget"


def test_search_bounds(api: httpx.Client) -> None:
    assert api.post(f"/api/v1/subjects/{S}/search", json={"query": "x", "k": 0}).status_code == 400
    assert api.post(f"/api/v1/subjects/{S}/search", json={"query": "", "k": 3}).status_code == 400
    r = api.post(f"/api/v1/subjects/{S}/search", json={"query": "x", "k": 1000})
    assert r.status_code == 400 and _code(r) == "invalid_input"


def test_auth_missing_wrong_and_role(api: httpx.Client, container: Container) -> None:
    base = str(api.base_url)
    r = httpx.post(f"{base}/api/v1/subjects/{S}/search", json={"query": "x"})
    assert r.status_code == 401 and _code(r) == "unauthenticated"
    r = httpx.post(f"{base}/api/v1/subjects/{S}/search", json={"query": "x"},
                   headers={"Authorization": "Bearer crn_0123456789ab_wrongwrongwrongwrongwrong"})
    assert r.status_code == 401
    dpo, _ = create_key(container.deps.catalog, container.pepper, tenant="t1", roles=["dpo"])
    r = httpx.post(f"{base}/api/v1/subjects/{S}/search", json={"query": "x"},
                   headers={"Authorization": f"Bearer {dpo}"})
    assert r.status_code == 403 and _code(r) == "forbidden"


@pytest.mark.parametrize(("method", "path", "allowed"), [
    ("TRACE", "/api/v1/admin/backup", {"POST"}),
    ("DELETE", "/healthz", {"GET"}),
    ("PUT", f"/api/v1/subjects/{S}/search", {"POST"}),
    ("OPTIONS", "/api/v1/procedures", {"GET", "POST"}),
    ("PUT", f"/api/v1/subjects/{S}/memories/lookup", {"POST", "GET", "PATCH", "DELETE"}),  # and ".../{memory_id}"
    ("OPTIONS", f"/api/v1/subjects/{S}/memories/664d1cf0-a2f4-5e87-bbfa-df36714c44aa", {"GET", "PATCH", "DELETE"}),
])
def test_a_method_the_path_does_not_take_names_the_ones_it_does(
        api: httpx.Client, method: str, path: str, allowed: set[str]) -> None:
    """405 with the code, and ``Allow`` naming every method of the path (RFC 9110 §15.5.6), also when several
    routes serve it: found by Schemathesis's method checks against a running server (the JSON error handler
    dropped the header; then Starlette's named only the first route's methods)."""
    r = api.request(method, path)
    assert r.status_code == 405 and _code(r) == "method_not_allowed"
    assert {m.strip() for m in r.headers["Allow"].split(",")} == allowed
