"""Issue 46, finding 3: a write never discloses, changes or names a record its caller's role may not read.

An ``agent`` key cannot read a judicial or religion record (special categories hidden by the tenant's
policy). A short note of the agent that reconcile would have merged into such a record, or that would
have superseded it, must come back as the agent's own created record: not the hidden record's text,
not its id, and the hidden record is left exactly as it was (no reinforcement, no closing). Over real
HTTP (``POST /api/v1/subjects/{id}/memories``) and over MCP ``remember``; and an intake's status, whose
call's fact the worker may merge into a hidden record, does not name that record to an agent."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp_types import CallToolResult

from carnet.bootstrap.container import Container
from carnet.bootstrap.wiring import start_workers
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.server import running
from carnet.entrypoints.mcp import build_server
from carnet.entrypoints.mcp.auth import with_key
from carnet.services.apikeys import create_key
from tests.support.clients import clients_for
from tests.support.extractors import ScriptedExtractor

SUBJECT = "ADH-4646"
URL = f"/api/v1/subjects/{SUBJECT}/memories"
HIDDEN = "Le membre a été condamné pour vol en 2019."  # judicial: hidden from agents by default
PROBE = "Le membre a été condamné."
RECORD = "Le membre a un casier judiciaire pour vol."  # judicial too
NO_RECORD = "Le membre n'a plus de casier judiciaire."  # would supersede RECORD


@pytest.fixture
def client_for(container: Container) -> Iterator[Callable[..., httpx.Client]]:
    with clients_for(container) as client:
        yield client


def _as_dpo(dpo: httpx.Client, memory_id: str) -> dict[str, Any]:
    r = dpo.get(f"{URL}/{memory_id}")
    assert r.status_code == 200, r.text
    found: dict[str, Any] = r.json()
    return found


def _only_own(answer: dict[str, Any], text: str, hidden_id: str) -> None:
    """The answer is the caller's own new record, and nothing in it names the hidden one."""
    assert answer["action"] == "created", answer
    assert answer["memory"]["text"] == text
    assert answer["merged_into"] is None and answer["superseded"] == []
    assert answer["memory"]["id"] != hidden_id
    assert hidden_id not in str(answer)


def test_an_agents_note_neither_merges_into_nor_reveals_a_hidden_record(
        client_for: Callable[..., httpx.Client]) -> None:
    agent, dpo = client_for("agent"), client_for("agent", "dpo")
    written = dpo.post(URL, json={"text": HIDDEN})
    assert written.status_code == 201 and written.json()["memory"]["special_categories"] == ["judicial"]
    hidden_id = written.json()["memory"]["id"]
    before = _as_dpo(dpo, hidden_id)

    r = agent.post(URL, json={"text": PROBE})
    assert r.status_code == 201, r.text
    _only_own(r.json(), PROBE, hidden_id)
    assert HIDDEN not in r.text and "vol" not in r.text
    batch = agent.post(URL, json={"memories": [{"text": "Le membre a été condamné en 2019."}]})
    assert batch.status_code == 201 and hidden_id not in batch.text
    after = _as_dpo(dpo, hidden_id)
    assert after == before  # not reinforced, not closed: the probe left no trace on it
    assert agent.get(f"{URL}/{hidden_id}").status_code == 404


def test_an_agents_note_does_not_supersede_a_hidden_record(client_for: Callable[..., httpx.Client]) -> None:
    agent, dpo = client_for("agent"), client_for("agent", "dpo")
    written = dpo.post(URL, json={"text": RECORD, "occurred_at": "2025-01-10T09:00:00Z"})
    assert written.status_code == 201 and written.json()["memory"]["special_categories"] == ["judicial"]
    hidden_id = written.json()["memory"]["id"]
    before = _as_dpo(dpo, hidden_id)
    r = agent.post(URL, json={"text": NO_RECORD, "occurred_at": "2025-06-10T09:00:00Z"})
    assert r.status_code == 201, r.text
    _only_own(r.json(), NO_RECORD, hidden_id)
    assert _as_dpo(dpo, hidden_id) == before  # still active, as it was


def test_mcp_remember_does_not_reveal_a_hidden_record(container: Container) -> None:
    def server(*roles: str) -> Any:
        key, _ = create_key(container.deps.catalog, container.pepper, tenant="assur-nord", roles=list(roles))
        return build_server(container.facade, principal=with_key(container, key))

    answers: list[dict[str, Any]] = []

    async def call(srv: Any, text: str) -> None:
        async with Client(srv) as client:
            r: CallToolResult = await client.call_tool("remember", {"subject_id": SUBJECT, "text": text})
            assert not r.is_error and isinstance(r.structured_content, dict), r.content
            answers.append(r.structured_content)

    anyio.run(call, server("agent", "dpo"), HIDDEN)
    hidden_id = answers[0]["memory"]["id"]
    anyio.run(call, server("agent"), PROBE)
    _only_own(answers[1], PROBE, hidden_id)
    assert HIDDEN not in str(answers[1])


def test_an_intake_status_does_not_name_a_hidden_record_its_call_was_merged_into(container: Container) -> None:
    start_workers(container, extractor=ScriptedExtractor())  # each member's turn becomes a fact as said
    keys = {role: create_key(container.deps.catalog, container.pepper, tenant="assur-nord", roles=list(roles))[0]
            for role, roles in (("agent", ["agent"]), ("dpo", ["agent", "dpo"]))}
    with running(create_app(container)) as base, ExitStack() as stack:
        agent, dpo = (stack.enter_context(httpx.Client(base_url=base, timeout=30,
                                                       headers={"Authorization": f"Bearer {keys[r]}"}))
                      for r in ("agent", "dpo"))
        hidden_id = dpo.post(URL, json={"text": HIDDEN}).json()["memory"]["id"]
        body = {"session_id": "call-1", "messages": [{"role": "user", "content": PROBE, "at": "2026-11-29T09:12:00Z"}]}
        iid = agent.post(f"/api/v1/subjects/{SUBJECT}/messages", json=body).json()["intake_id"]
        seen = agent.get(f"/api/v1/intakes/{iid}", params={"wait": "true", "timeout": 20}).json()
        assert seen["status"] == "done" and hidden_id not in seen["memory_ids"]
        assert hidden_id in dpo.get(f"/api/v1/intakes/{iid}").json()["memory_ids"]  # merged: a dpo sees it
