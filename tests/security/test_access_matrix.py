"""Who may call what: every route against every role, every subject route across tenants, and the
edge's refusals (401, 429, 413). Real HTTP against the real stack."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import count

import httpx
import pytest

from carnet.bootstrap.container import Container
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.server import running
from carnet.services.apikeys import create_key

_n = count()


@dataclass(frozen=True)
class Route:
    method: str
    path: str  # {s}: subject id, {m}: a memory id of that subject
    allowed: frozenset[str]
    body: dict[str, object] | None = None
    subject_route: bool = True
    past_the_role: tuple[int, ...] = ()  # statuses of the action's own rules, answered once the role has passed


ROUTES = [
    Route("POST", "/api/v1/subjects/{s}/memories", frozenset({"agent"}),
          {"text": "Le membre a un contrat habitation."}),
    Route("POST", "/api/v1/subjects/{s}/messages", frozenset({"agent"}),
          {"messages": [{"role": "user", "content": "J'ai changé de banque."}]}),
    Route("GET", "/api/v1/subjects/{s}/memories", frozenset({"agent", "dpo"})),
    Route("POST", "/api/v1/subjects/{s}/memories/lookup", frozenset({"agent"}), {"identifier": "SIN-2024-0815"}),
    Route("GET", "/api/v1/subjects/{s}/memories/{m}", frozenset({"agent", "dpo"})),
    Route("PATCH", "/api/v1/subjects/{s}/memories/{m}", frozenset({"dpo"}), {"importance": 0.8}),
    Route("DELETE", "/api/v1/subjects/{s}/memories/{m}", frozenset({"agent", "dpo"})),
    Route("GET", "/api/v1/subjects/{s}/memories/{m}/history", frozenset({"dpo"})),
    # the seeded record is active: a restore passes the role, then answers 409 not_superseded
    Route("POST", "/api/v1/subjects/{s}/memories/{m}/restore", frozenset({"dpo", "supervisor"}), {},
          past_the_role=(409,)),
    Route("POST", "/api/v1/subjects/{s}/search", frozenset({"agent"}), {"query": "contrat"}),
    Route("POST", "/api/v1/context/assemble", frozenset({"agent"}), {"subject_id": "{s}", "query": "contrat"}),
    Route("GET", "/api/v1/subjects/{s}/export", frozenset({"dpo"})),
    Route("DELETE", "/api/v1/subjects/{s}", frozenset({"dpo"})),
    Route("GET", "/api/v1/subjects/{s}/retention", frozenset({"dpo"})),
    Route("PUT", "/api/v1/subjects/{s}/legal-hold", frozenset({"dpo"}), {"reference": "LIT-2026-0042"}),
    Route("DELETE", "/api/v1/subjects/{s}/legal-hold", frozenset({"dpo"})),
    Route("PUT", "/api/v1/subjects/{s}/relationship-end", frozenset({"dpo"}), {"ended_at": "2026-06-30T00:00:00Z"}),
    Route("GET", "/api/v1/audit", frozenset({"dpo", "admin"}), subject_route=False),
    Route("POST", "/api/v1/admin/maintain", frozenset({"admin"}), {"dry_run": True}, subject_route=False),
    Route("POST", "/api/v1/admin/backup", frozenset({"admin"}), subject_route=False),
    Route("GET", "/api/v1/audit/verify", frozenset({"dpo", "admin"}), subject_route=False),
    Route("GET", "/api/v1/admin/apikeys", frozenset({"admin"}), subject_route=False),
    Route("POST", "/api/v1/admin/apikeys", frozenset({"admin"}), {"roles": ["agent"]}, subject_route=False),
    Route("GET", "/api/v1/procedures", frozenset({"agent", "supervisor"}), subject_route=False),
    Route("POST", "/api/v1/procedures", frozenset({"agent", "supervisor"}),
          {"text": "Pour un bris de glace, demander le constat."}, subject_route=False),
]


@pytest.fixture
def base(container: Container) -> Iterator[str]:
    with running(create_app(container)) as url:
        yield url


def _key(container: Container, tenant: str, *roles: str, rate_limit: str | None = None) -> str:
    return create_key(container.deps.catalog, container.pepper, tenant=tenant, roles=list(roles),
                      rate_limit=rate_limit)[0]


def _seed(client: httpx.Client, subject: str) -> str:
    r = client.post(f"/api/v1/subjects/{subject}/memories",
                    json={"text": "Sinistre SIN-2024-0815 : dégât des eaux, expert mandaté."})
    assert r.status_code == 201, r.text
    return str(r.json()["memory"]["id"])


def _call(client: httpx.Client, route: Route, subject: str, memory_id: str) -> httpx.Response:
    def fill(v: object) -> object:
        return v.replace("{s}", subject) if isinstance(v, str) else v

    body = {k: fill(v) for k, v in route.body.items()} if route.body else None
    return client.request(route.method, route.path.format(s=subject, m=memory_id), json=body)


def _client(base: str, key: str) -> httpx.Client:
    return httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=30)


@pytest.mark.parametrize("role", ["agent", "dpo", "admin", "supervisor"])
def test_role_by_endpoint(container: Container, base: str, role: str) -> None:
    seeder = _client(base, _key(container, "assur-nord", "agent"))
    caller = _client(base, _key(container, "assur-nord", role))
    with seeder, caller:
        for route in ROUTES:
            subject = f"MBR-{next(_n)}"
            memory_id = _seed(seeder, subject)
            r = _call(caller, route, subject, memory_id)
            if role in route.allowed:
                assert r.status_code < 300 or r.status_code in route.past_the_role, (
                    route.method, route.path, r.status_code, r.text)
            else:
                assert r.status_code == 403, (route.method, route.path, r.status_code)
                assert r.json()["error"]["code"] == "forbidden"


def test_another_tenants_subjects_are_not_found_on_every_route(container: Container, base: str) -> None:
    """Tenant A's key, with every role, on tenant B's subject and record: 404, never 403, never data."""
    owner = _client(base, _key(container, "banque-sud", "agent", "dpo"))
    intruder = _client(base, _key(container, "assur-nord", "agent", "dpo", "admin"))
    with owner, intruder:
        subject = "CLI-2002"
        memory_id = _seed(owner, subject)
        for route in ROUTES:
            if not route.subject_route or (route.method == "POST" and route.path.endswith(("/memories", "/messages"))):
                continue  # writing creates A's own subject of that id: covered by test_tenant_isolation
            r = _call(intruder, route, subject, memory_id)
            assert r.status_code == 404, (route.method, route.path, r.status_code, r.text)
            assert "Sinistre" not in r.text and "SIN-2024" not in r.text
        # tenant B still has everything
        assert owner.get(f"/api/v1/subjects/{subject}/memories/{memory_id}").status_code == 200
        assert len(owner.get(f"/api/v1/subjects/{subject}/export").json()["records"]) == 1
        audit = intruder.get("/api/v1/audit").text
        assert owner.get("/api/v1/audit").text and container.deps.hasher.subject_hash("banque-sud", subject) \
            not in audit


def test_missing_malformed_and_revoked_keys_are_401(container: Container, base: str) -> None:
    admin = _client(base, _key(container, "assur-nord", "admin"))
    with admin:
        made = admin.post("/api/v1/admin/apikeys", json={"roles": ["agent"], "name": "ivr-bot"}).json()
        agent = _client(base, made["key"])
        with agent:
            assert agent.get("/api/v1/subjects/X-1/memories").status_code == 404
            assert admin.delete(f"/api/v1/admin/apikeys/{made['key_id']}").status_code == 204
            r = agent.get("/api/v1/subjects/X-1/memories")
            assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
        listed = admin.get("/api/v1/admin/apikeys").json()["items"]
        assert any(k["key_id"] == made["key_id"] and k["revoked"] for k in listed)
        assert "key" not in listed[0] and "key_hash" not in listed[0]
    for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": "Basic dXNlcjpwYXNz"}):
        r = httpx.get(f"{base}/api/v1/subjects/X-1/memories", headers=headers)
        assert r.status_code == 401 and r.json()["error"]["code"] == "unauthenticated"


def test_admin_cannot_revoke_another_tenants_key(container: Container, base: str) -> None:
    other = create_key(container.deps.catalog, container.pepper, tenant="banque-sud", roles=["agent"])[1]
    with _client(base, _key(container, "assur-nord", "admin")) as admin:
        r = admin.delete(f"/api/v1/admin/apikeys/{other.key_id}")
        assert r.status_code == 404
    assert not any(k.revoked for k in container.deps.catalog.api_keys("banque-sud"))


def test_rate_limit_per_key(container: Container, base: str) -> None:
    limited = _client(base, _key(container, "assur-nord", "agent", rate_limit="3/minute"))
    other = _client(base, _key(container, "assur-nord", "agent"))
    with limited, other:
        codes = [limited.get("/api/v1/subjects/X-1/memories").status_code for _ in range(4)]
        assert codes == [404, 404, 404, 429]
        r = limited.get("/api/v1/subjects/X-1/memories")
        assert r.json()["error"]["code"] == "rate_limited" and int(r.headers["retry-after"]) >= 1
        assert other.get("/api/v1/subjects/X-1/memories").status_code == 404  # budgets are per key


def test_oversized_bodies_are_413_announced_or_streamed(container: Container, base: str) -> None:
    limit = container.settings.api.max_body_bytes
    with _client(base, _key(container, "assur-nord", "agent")) as agent:
        big = b'{"text": "' + b"a" * (limit + 10) + b'"}'
        r = agent.post("/api/v1/subjects/X-1/memories", content=big, headers={"content-type": "application/json"})
        assert r.status_code == 413 and r.json()["error"]["code"] == "payload_too_large"

        def chunks() -> Iterator[bytes]:
            yield b'{"text": "'
            for _ in range(limit // 65536 + 2):
                yield b"a" * 65536
            yield b'"}'

        r = agent.post("/api/v1/subjects/X-1/memories", content=chunks(), headers={"content-type": "application/json"})
        assert r.status_code == 413
        assert agent.get("/api/v1/subjects/X-1/memories").status_code == 404  # nothing was written


def test_refused_access_is_audited_without_the_key(container: Container, base: str) -> None:
    """ASVS 16.3.2: a wrong role (403) lands in the tenant's chain once, as the refused action (the
    facade's door records it), a bad key (401) in `_system`."""
    with _client(base, _key(container, "assur-nord", "dpo")) as dpo:
        assert dpo.post("/api/v1/subjects/X-1/memories", json={"text": "x"}).status_code == 403
        refused = httpx.get(f"{base}/api/v1/subjects/X-1/memories", headers={"Authorization": "Bearer crn_nope"})
        assert refused.status_code == 401
        container.refusals.close()  # 401s are audited per source and window (tests/security/test_unauthenticated.py)
        container.audit.flush()
        denied = [e.event for e in container.audit.log.entries("assur-nord")]
        assert [(e.action, e.outcome, e.detail) for e in denied] == [
            ("memory.write", "refused", {"error": "forbidden"})]
        anonymous = [e.event for e in container.audit.log.entries("_system") if e.event.action == "access.denied"]
        assert anonymous[-1].actor == "anonymous" and anonymous[-1].detail["code"] == "unauthenticated"
        assert "crn_nope" not in str(anonymous[-1]) and "X-1" not in str(denied + anonymous)
