"""One door: the CLI, REST and MCP call the same services with the same rules (roles, legal hold,
unknown subjects, audit), and a refused action leaves exactly one audit entry, marked refused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from typer.testing import CliRunner

from carnet.bootstrap.container import Container
from carnet.bootstrap.wiring import build
from carnet.domain.audit import AuditEvent
from carnet.entrypoints.cli.main import app as cli
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.server import running
from carnet.entrypoints.mcp import build_server
from carnet.entrypoints.mcp.auth import with_key
from carnet.errors import CarnetError
from carnet.ports import Embedder
from carnet.services.apikeys import Principal, create_key
from carnet.services.memories.remember import NewMemory
from carnet.settings.root import Settings

TENANT = "assur-nord"
HELD, OTHER = "ADH-0042", "ADH-0043"
runner = CliRunner()
DPO = Principal("k-dpo", TENANT, ("agent", "dpo"))


def _settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys")


def _env(tmp_path: Path) -> dict[str, str]:
    return {"CARNET_KEY_DIR": str(tmp_path / "keys")}


def _cli(tmp_path: Path, *args: str) -> Any:
    return runner.invoke(cli, [*args, "--data-dir", str(tmp_path / "data")], env=_env(tmp_path))


def _entries(c: Container, tenant: str = TENANT) -> list[AuditEvent]:
    c.audit.flush()
    return [e.event for e in c.audit.log.entries(tenant)]


def _ledger(settings: Settings) -> bytes:
    path = settings.resolved_erasure_ledger
    return path.read_bytes() if path.exists() else b""


@pytest.fixture
def stored(tmp_path: Path, embedder: Embedder) -> Iterator[Settings]:
    """Two subjects with a memory each, the first under legal hold; no process holds the store after."""
    settings = _settings(tmp_path)
    c = build(settings, embedder=embedder)
    try:
        for subject in (HELD, OTHER):
            c.facade.remember(DPO, subject_id=subject, items=[NewMemory("Le membre a un contrat habitation.")])
        c.facade.legal_hold(DPO, subject_id=HELD, hold=True, reference="LIT-2026-0042")
    finally:
        c.close()
    yield settings


def _count(settings: Settings, embedder: Embedder, subject: str) -> int:
    c = build(settings, embedder=embedder)
    try:
        return c.facade.export(DPO, subject_id=subject).count
    finally:
        c.close()


@pytest.mark.slow  # builds the stack and runs the CLI (which loads its own embedder)
def test_cli_erasure_of_a_held_subject_is_refused(tmp_path: Path, stored: Settings, embedder: Embedder) -> None:
    before = _ledger(stored)
    result = _cli(tmp_path, "subject", "erase", "--tenant", TENANT, "--subject", HELD)
    assert result.exit_code == 2, result.output
    assert "legal hold" in result.output and '"complete"' not in result.output
    assert _ledger(stored) == before  # no erasure was promised to a restore
    assert _count(stored, embedder, HELD) == 1  # nothing deleted
    c = build(stored, embedder=embedder)
    try:
        erase = [e for e in _entries(c) if e.action == "subject.erase"]
        assert [(e.outcome, e.actor, e.detail) for e in erase] == [("refused", "cli:subject", {"error": "legal_hold"})]
    finally:
        c.close()


@pytest.mark.slow  # builds the stack and runs the CLI (which loads its own embedder)
def test_cli_erasure_of_an_unknown_subject_is_refused_like_rest(tmp_path: Path, stored: Settings) -> None:
    before = _ledger(stored)
    result = _cli(tmp_path, "subject", "erase", "--tenant", TENANT, "--subject", "NOBODY-1")
    assert result.exit_code == 2, result.output
    assert '"complete"' not in result.output and "no memories for this subject" in result.output
    assert "NOBODY-1" not in result.output
    assert _ledger(stored) == before


@pytest.mark.slow  # builds the stack and runs the CLI (which loads its own embedder)
def test_cli_and_rest_erasure_leave_the_same_audit_entries(tmp_path: Path, stored: Settings,
                                                           embedder: Embedder) -> None:
    c = build(stored, embedder=embedder)
    try:
        key = create_key(c.deps.catalog, c.pepper, tenant=TENANT, roles=["dpo"])[0]
        with running(create_app(c)) as base:
            r = httpx.delete(f"{base}/api/v1/subjects/{OTHER}", headers={"Authorization": f"Bearer {key}"})
            assert r.status_code == 200 and r.json()["complete"], r.text
        c.facade.legal_hold(DPO, subject_id=HELD, hold=False)
        rest_hash = c.deps.hasher.subject_hash(TENANT, OTHER)
        cli_hash = c.deps.hasher.subject_hash(TENANT, HELD)
    finally:
        c.close()
    result = _cli(tmp_path, "subject", "erase", "--tenant", TENANT, "--subject", HELD)
    assert result.exit_code == 0 and '"complete": true' in result.output, result.output
    c = build(stored, embedder=embedder)
    try:
        entries = _entries(c)
    finally:
        c.close()

    def erasure(subject: str) -> list[tuple[str, str, tuple[str, ...]]]:
        return [(e.action, e.outcome, tuple(sorted(e.detail))) for e in entries
                if e.subject == subject and e.action.startswith("subject.eras")]

    assert erasure(rest_hash) == erasure(cli_hash) == [
        ("subject.erase", "ok", ()),
        ("subject.erased", "ok",
         ("catalog_rows_deleted", "data_key_destroyed", "procedures_deleted", "records_deleted"))]


def test_a_refused_cli_key_creation_leaves_one_refused_entry(tmp_path: Path, container: Container) -> None:
    """`apikey create --role superuser`: no `ok` entry before the failure, one `refused` entry, and the
    rejected value is nowhere in the trail."""
    data_dir = str(container.settings.data_dir)
    result = runner.invoke(cli, ["apikey", "create", "--tenant", "banque-sud", "--role", "superuser",
                                 "--data-dir", data_dir], env={"CARNET_KEY_DIR": str(container.settings.key_dir)})
    assert result.exit_code == 2 and "roles must be among" in result.output
    entries = _entries(container, "banque-sud")
    assert [(e.action, e.outcome, e.actor, e.detail) for e in entries] == [
        ("apikey.create", "refused", "cli:apikey", {"error": "invalid_input"})]
    assert "superuser" not in str(entries)
    result = runner.invoke(cli, ["apikey", "revoke", "0123456789ab", "--data-dir", data_dir],
                           env={"CARNET_KEY_DIR": str(container.settings.key_dir)})
    assert result.exit_code == 2
    assert [(e.action, e.outcome) for e in _entries(container, "_system")] == [("apikey.revoke", "refused")]


def _client(base: str, key: str) -> httpx.Client:
    return httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=30)


@pytest.mark.parametrize(("role", "method", "path", "body", "action"), [
    ("dpo", "POST", "/api/v1/subjects/X-1/memories", {"text": "Le membre a un contrat auto."}, "memory.write"),
    ("admin", "GET", "/api/v1/subjects/X-1/memories", None, "memory.list"),
    ("agent", "DELETE", "/api/v1/subjects/X-1", None, "subject.erase"),
    ("dpo", "POST", "/api/v1/admin/apikeys", {"roles": ["agent"]}, "apikey.create"),
    ("dpo", "DELETE", "/api/v1/admin/apikeys/0123456789ab", None, "apikey.revoke"),
    ("dpo", "GET", "/api/v1/admin/apikeys", None, "apikey.list"),
    ("dpo", "POST", "/api/v1/admin/maintain", {"dry_run": True}, "admin.maintain"),
    ("agent", "GET", "/api/v1/audit", None, "audit.read"),
    ("agent", "GET", "/api/v1/audit/verify", None, "audit.verify"),
])
def test_a_403_over_rest_leaves_exactly_one_refused_entry(container: Container, role: str, method: str, path: str,
                                                          body: dict[str, object] | None, action: str) -> None:
    key, record = create_key(container.deps.catalog, container.pepper, tenant=TENANT, roles=[role])
    with running(create_app(container)) as base, _client(base, key) as caller:
        r = caller.request(method, path, json=body)
        assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden", r.text
    entries = [e for e in _entries(container) if e.actor == record.key_id]
    assert [(e.action, e.outcome, e.detail) for e in entries] == [(action, "refused", {"error": "forbidden"})]


def test_a_403_over_mcp_leaves_exactly_one_refused_entry(container: Container) -> None:
    key, record = create_key(container.deps.catalog, container.pepper, tenant=TENANT, roles=["dpo"])
    server = build_server(container.facade, principal=with_key(container, key))

    async def main() -> None:
        async with Client(server) as client:
            r = await client.call_tool("remember", {"subject_id": "X-1", "text": "Le membre a un contrat auto."})
            assert r.is_error and isinstance(r.structured_content, dict)
            assert r.structured_content["error"]["code"] == "forbidden"

    anyio.run(main)
    entries = [e for e in _entries(container) if e.actor == record.key_id]
    assert [(e.action, e.outcome) for e in entries] == [("memory.write", "refused")]


def test_refusals_by_the_rules_leave_one_refused_entry(container: Container) -> None:
    """Input refused, unknown subject, legal hold, an unknown key to revoke: one `refused` entry each,
    never an `ok` entry followed by a `failed` one; what was refused is not echoed into the trail."""
    keys = {role: create_key(container.deps.catalog, container.pepper, tenant=TENANT, roles=[role])
            for role in ("agent", "dpo", "admin")}
    with running(create_app(container)) as base:
        agent, dpo, admin = (_client(base, keys[r][0]) for r in ("agent", "dpo", "admin"))
        with agent, dpo, admin:
            assert agent.post("/api/v1/subjects/X-1/memories", json={"text": "Le membre a un contrat."}).status_code \
                == 201
            calls = [
                (agent.post("/api/v1/subjects/X-1/memories", json={"text": "   "}), "memory.write", "invalid_input"),
                (agent.post("/api/v1/subjects/X-1/messages", json={"messages": [{"role": "user", "content": "   "}]}),
                 "intake.submit", "invalid_input"),
                (dpo.delete("/api/v1/subjects/NOBODY-1"), "subject.erase", "subject_not_found"),
                (dpo.put("/api/v1/subjects/NOBODY-1/legal-hold", json={}), "subject.hold", "subject_not_found"),
                (dpo.put("/api/v1/subjects/X-1/legal-hold", json={"reference": "Mme Vasseur"}), "subject.hold",
                 "invalid_input"),
                (dpo.patch("/api/v1/subjects/X-1/memories/00000000-0000-0000-0000-000000000000",
                           json={"importance": 0.5}), "memory.rectify", "memory_not_found"),
                (admin.post("/api/v1/admin/apikeys", json={"roles": ["superuser"]}), "apikey.create",
                 "invalid_input"),
                (admin.delete("/api/v1/admin/apikeys/0123456789ab"), "apikey.revoke", "not_found"),
            ]
            assert dpo.put("/api/v1/subjects/X-1/legal-hold", json={"reference": "LIT-1"}).status_code == 200
            calls.append((dpo.delete("/api/v1/subjects/X-1"), "subject.erase", "legal_hold"))
    for response, _, code in calls:
        assert response.status_code in (400, 404, 409) and response.json()["error"]["code"] == code
    entries = _entries(container)
    assert not [e for e in entries if e.outcome == "failed"]
    refused = [(e.action, e.detail["error"]) for e in entries if e.outcome == "refused"]
    assert refused == [(action, code) for _, action, code in calls]
    assert "Vasseur" not in str(entries) and "superuser" not in str(entries)


def test_no_route_checks_roles_or_writes_audit_entries_itself() -> None:
    """Every route goes through the facade: roles and audit entries have one home (services/door.py)."""
    routes = Path(__file__).resolve().parents[2] / "src" / "carnet" / "api"
    for module in routes.glob("routes_*.py"):
        source = module.read_text(encoding="utf-8")
        for forbidden in (".require(", "audit.record", "audit.event", "audit.read("):
            assert forbidden not in source, (module.name, forbidden)


@pytest.mark.slow  # builds the stack and runs the CLI (which loads its own embedder)
def test_cli_maintain_and_audit_export_go_through_the_door(tmp_path: Path, stored: Settings,
                                                           embedder: Embedder) -> None:
    """`carnet maintain` (and the scheduler, through the same method) records its intent like
    `POST /admin/maintain`; `carnet audit export` records the reading like `GET /api/v1/audit`."""
    result = _cli(tmp_path, "maintain", "--dry-run", "--no-compact")
    assert result.exit_code == 0, result.output
    out = tmp_path / "siem.jsonl"
    result = _cli(tmp_path, "audit", "export", "--tenant", TENANT, "--output", str(out))
    assert result.exit_code == 0, result.output
    exported = len(out.read_text().splitlines())
    c = build(stored, embedder=embedder)
    try:
        store_wide = [(e.action, e.outcome, e.actor) for e in _entries(c, "_system")]
        tenant = [(e.action, e.actor, e.detail.get("count")) for e in _entries(c)]
    finally:
        c.close()
    assert store_wide == [("admin.maintain", "ok", "cli:maintain")]
    assert ("retention.maintain", "cli:maintain", None) in tenant
    assert tenant[-1] == ("audit.read", "cli:audit", exported)


@pytest.mark.slow  # builds the stack and runs the CLI (which loads its own embedder)
def test_a_tenant_shred_without_confirmation_is_refused_once(tmp_path: Path, embedder: Embedder) -> None:
    result = _cli(tmp_path, "tenant", "shred", "--tenant", TENANT, "--confirm", "banque-sud")
    assert result.exit_code == 2 and f"--confirm {TENANT}" in result.output
    c = build(_settings(tmp_path), embedder=embedder)
    try:
        assert [(e.action, e.outcome, e.actor) for e in _entries(c)] == [("tenant.shred", "refused", "cli:tenant")]
    finally:
        c.close()


_CALLS: dict[str, tuple[frozenset[str], Any]] = {
    "memory.list": (frozenset({"agent", "dpo"}), lambda f, who: f.list_memories(who, subject_id="X-9")),
    "memory.write": (frozenset({"agent"}), lambda f, who: f.remember(who, subject_id="X-9", items=[])),
    "subject.export": (frozenset({"dpo"}), lambda f, who: f.export(who, subject_id="X-9")),
    "subject.erase": (frozenset({"dpo"}), lambda f, who: f.erase(who, subject_id="X-9")),
    "subject.hold": (frozenset({"dpo"}), lambda f, who: f.legal_hold(who, subject_id="X-9", hold=True)),
    "apikey.create": (frozenset({"admin"}), lambda f, who: f.admin.create_key(who, roles=["root"])),
    "apikey.revoke": (frozenset({"admin"}), lambda f, who: f.admin.revoke_key(who, key_id="0123456789ab")),
}


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(roles=st.sets(st.sampled_from(["agent", "dpo", "admin"]), max_size=3),
       action=st.sampled_from(sorted(_CALLS)))
def test_any_refusal_through_the_facade_is_one_refused_entry(container: Container, roles: set[str],
                                                            action: str) -> None:
    """Whatever the roles and the action (each call here is refused: unknown subject, empty batch,
    bad role, unknown key), one new entry, `refused`, with `forbidden` exactly when a role is missing."""
    allowed, call = _CALLS[action]
    who = Principal(f"k-{len(roles)}", TENANT, tuple(sorted(roles)))
    before = len(_entries(container))
    with pytest.raises(CarnetError) as refused:
        call(container.facade, who)
    new = _entries(container)[before:]
    assert [(e.action, e.outcome, e.detail) for e in new] == [(action, "refused", {"error": refused.value.code})]
    assert (refused.value.code == "forbidden") == (not allowed & roles)


def test_a_hold_placed_after_the_first_check_still_stops_the_erasure(container: Container,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The race of a hold against an erasure: the rules are checked again under the subject's lock,
    which placing a hold takes too, so a hold that lands after the door's check is not missed."""
    from carnet.errors import LegalHold
    from carnet.services.door import operator
    from carnet.services.facade import Facade
    from carnet.services.rights import retention

    agent, dpo = operator(TENANT, "test:agent", "agent"), operator(TENANT, "test:dpo", "dpo")
    container.facade.remember(agent, subject_id="ADH-RACE", items=[NewMemory("Le membre habite à Nantes.")])
    first_check = Facade._erasable
    calls = {"n": 0}

    def hold_lands_right_after(self: Facade, who: Principal, subject_id: str) -> None:
        calls["n"] += 1
        first_check(self, who, subject_id)
        if calls["n"] == 1:  # the door's check passed: now a DPO elsewhere places a hold
            retention.set_legal_hold(self.deps, tenant=TENANT, subject_id=subject_id, reference=None)

    monkeypatch.setattr(Facade, "_erasable", hold_lands_right_after)
    with pytest.raises(LegalHold):
        container.facade.erase(dpo, subject_id="ADH-RACE")
    assert calls["n"] == 2
    assert container.facade.list_memories(dpo, subject_id="ADH-RACE").items, "a held subject lost its records"
