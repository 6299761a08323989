"""The published OpenAPI document against the code (issue 50, item 3): every role named, each operation's
roles those the access matrix finds, and each operation's error codes those of the error tree
(``carnet.errors``) or of the HTTP edge's translation (``entrypoints/http/errors.py``), with their status.
Then errors provoked over real HTTP: each answer's code is one its operation lists."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

import carnet.crypto.errors  # noqa: F401  (the crypto layer's errors: part of the tree)
from carnet.bootstrap.container import Container
from carnet.entrypoints.http.errors import EDGE_CODES
from carnet.entrypoints.http.openapi_routes import OPEN, ROUTES
from carnet.errors import CarnetError
from carnet.services.apikeys import ROLES
from tests.security.test_access_matrix import ROUTES as MATRIX
from tests.support.clients import clients_for

# Codes of the tree no REST operation answers, and why: what it is for is not served over REST.
NOT_OVER_REST = {
    "backup_corrupt": "carnet backup restore, on the host",
    "restore_refused": "carnet backup restore, on the host",
    "ledger_corrupt": "the erasure ledger, read by carnet backup on the host",
    "store_locked": "a second process on an embedded store: commands, not requests",
    "extraction_failed": "an intake's dead-letter reason (GET /api/v1/intakes/{id} answers 200 with it)",
    "method_not_allowed": "GET /mcp (the MCP endpoint, not in the OpenAPI document)",
}


def _tree(cls: type[CarnetError] = CarnetError) -> dict[str, int]:
    found = {cls.code: cls.status}
    for sub in cls.__subclasses__():
        for code, status in _tree(sub).items():
            assert found.get(code, status) == status, code  # one code, one status
            found[code] = status
    return found


@pytest.fixture
def client(container: Container) -> Iterator[Callable[..., httpx.Client]]:
    with clients_for(container) as make:
        yield make


@pytest.fixture
def doc(client: Callable[..., httpx.Client]) -> dict[str, Any]:
    answer = client("agent").get("/openapi.json")
    assert answer.status_code == 200
    return dict(answer.json())


def _operations(doc: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(method.upper(), path): op for path, ops in doc["paths"].items() for method, op in ops.items()}


def test_every_role_is_named_and_every_operation_is_documented(doc: dict[str, Any]) -> None:
    for role in ROLES:
        assert f"`{role}`" in doc["info"]["description"], role
    operations = _operations(doc)
    assert set(operations) == set(ROUTES) | set(OPEN)
    for key, op in operations.items():
        assert op.get("x-error-codes"), key
        if key in ROUTES:
            assert set(op["x-roles"]) <= set(ROLES) and op["x-roles"], key
            assert "**Roles**" in op["description"], key


def test_roles_are_those_the_access_matrix_finds(doc: dict[str, Any]) -> None:
    operations = _operations(doc)
    for route in MATRIX:
        path = route.path.replace("{s}", "{subject_id}").replace("{m}", "{memory_id}")
        assert set(operations[(route.method, path)]["x-roles"]) == set(route.allowed), (route.method, path)


def test_every_code_is_the_error_trees_or_the_edges_with_its_status(doc: dict[str, Any]) -> None:
    known = {**_tree(), **EDGE_CODES}
    documented: set[str] = set()
    for key, op in _operations(doc).items():
        for code, status in op["x-error-codes"].items():
            assert known.get(code) == status, (key, code, status)
            examples = op["responses"][str(status)]["content"]["application/json"]["examples"]
            assert code in examples, (key, code)  # listed under its status, as Swagger UI shows it
            documented.add(code)
        for status in op["responses"]:
            if int(status) >= 400 and "ReadyOut" not in str(op["responses"][status]):
                assert int(status) in op["x-error-codes"].values(), (key, status)  # no status without a code
    served = set(known) - {"not_found", "http_error"} - set(NOT_OVER_REST)  # not_found: an unknown path
    assert served - documented == set(), "codes of the tree no operation lists"
    assert set(NOT_OVER_REST) <= set(known)  # the exceptions name real codes


def _codes(doc: dict[str, Any], method: str, path: str) -> dict[str, int]:
    return dict(_operations(doc)[(method, path)]["x-error-codes"])


def test_errors_answered_over_http_are_those_their_operation_lists(
        client: Callable[..., httpx.Client], doc: dict[str, Any]) -> None:
    agent, dpo, supervisor, admin = client("agent"), client("dpo"), client("supervisor"), client("admin")
    s, m = "/api/v1/subjects/{subject_id}", "/api/v1/subjects/{subject_id}/memories/{memory_id}"
    memory = agent.post("/api/v1/subjects/ADH-1/memories", json={"text": "Le membre habite à Lyon."})
    assert memory.status_code == 201, memory.text
    memory_id = memory.json()["memory"]["id"]
    assert dpo.put("/api/v1/subjects/ADH-1/legal-hold", json={"reference": "LIT-1"}).status_code == 200
    proposed = supervisor.post("/api/v1/procedures", json={"text": "Pour un bris de glace, demander le constat."})
    approved = supervisor.post(f"/api/v1/procedures/{proposed.json()['id']}/approve")
    assert approved.status_code == 200, approved.text
    first = agent.post("/api/v1/subjects/ADH-1/memories", json={"text": "Note A."}, headers={"Idempotency-Key": "k"})
    assert first.status_code == 201, first.text
    provoked: list[tuple[str, str, httpx.Response]] = [
        ("POST", s + "/memories", agent.post("/api/v1/subjects/ADH-1/memories", json={"text": "Note B."},
                                             headers={"Idempotency-Key": "k"})),
        ("DELETE", s, dpo.delete("/api/v1/subjects/ADH-1")),
        ("POST", m + "/restore", supervisor.post(f"/api/v1/subjects/ADH-1/memories/{memory_id}/restore", json={})),
        ("GET", m, agent.get("/api/v1/subjects/ADH-1/memories/0b7c1a4e-0000-4000-8000-000000000000")),
        ("GET", s + "/export", dpo.get("/api/v1/subjects/ADH-404/export")),
        ("POST", "/api/v1/context/assemble", agent.post("/api/v1/context/assemble", json={
            "subject_id": "ADH-1", "query": "adresse", "budgets": {"memories": -1}})),
        ("GET", "/api/v1/intakes/{intake_id}", agent.get("/api/v1/intakes/0b7c1a4e-0000-4000-8000-000000000000")),
        ("POST", "/api/v1/procedures/{procedure_id}/approve",
         supervisor.post(f"/api/v1/procedures/{proposed.json()['id']}/approve")),
        ("POST", "/api/v1/procedures", agent.post("/api/v1/procedures", json={
            "text": "Rappeler Jean-Baptiste Lefèvre au 06 12 34 56 78 pour son dossier."})),
        ("GET", "/api/v1/admin/apikeys", agent.get("/api/v1/admin/apikeys")),
        ("DELETE", "/api/v1/admin/apikeys/{key_id}", admin.delete("/api/v1/admin/apikeys/0123456789ab")),
        ("POST", s + "/search", agent.post("/api/v1/subjects/ADH-1/search", json={"query": "x", "k": 0})),
        ("GET", s + "/memories", httpx.get(f"{agent.base_url}/api/v1/subjects/ADH-1/memories")),
    ]
    seen = set()
    for method, path, answer in provoked:
        assert answer.status_code >= 400, (method, path, answer.text)
        code = answer.json()["error"]["code"]
        assert _codes(doc, method, path).get(code) == answer.status_code, (method, path, code, answer.status_code)
        seen.add(code)
    # the codes the issue found missing from the document, each answered and listed
    assert {"legal_hold", "idempotency_key_reused", "procedure_state", "procedure_personal_data",
            "not_superseded"} <= seen
