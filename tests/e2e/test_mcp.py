"""MCP: the SDK's own client calls each tool in-process, over stdio and over streamable HTTP."""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters, stdio_client
from mcp.client import Transport
from mcp.client.streamable_http import streamable_http_client
from mcp.server import Server
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent
from typer.testing import CliRunner

from carnet.bootstrap.container import Container
from carnet.bootstrap.stores import build_control_plane
from carnet.entrypoints.cli.main import app as cli
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.server import running
from carnet.entrypoints.mcp import build_server
from carnet.entrypoints.mcp.auth import with_key
from carnet.services.apikeys import create_key, revoke_key
from carnet.settings.root import Settings

SUBJECT = "ADH-0042"
TENANT = "assur-nord"
HOME = "Le membre habite maintenant à Villeurbanne."
EMAIL = "Le membre préfère être contacté par email."
TOOLS = {"remember", "recall", "assemble_context", "forget_memory", "list_memories", "list_procedures",
         "propose_procedure", "restore_memory"}


def _key(c: Container, tenant: str = TENANT, roles: tuple[str, ...] = ("agent",), rate: str | None = None) -> str:
    key, _ = create_key(c.deps.catalog, c.pepper, tenant=tenant, roles=list(roles), rate_limit=rate)
    return key


def _data(r: CallToolResult) -> dict[str, Any]:
    assert not r.is_error, r.content
    assert isinstance(r.structured_content, dict)
    return r.structured_content


def _text(r: CallToolResult) -> str:
    block = r.content[0]
    assert isinstance(block, TextContent)
    return block.text


def _error(r: CallToolResult) -> dict[str, Any]:
    assert r.is_error and isinstance(r.structured_content, dict), r.content
    text = _text(r)
    assert "Traceback" not in text and SUBJECT not in text
    error: dict[str, Any] = r.structured_content["error"]
    return error


def _with(server: Server[Any] | Transport, session: Callable[[Client], Awaitable[None]], **options: Any) -> None:
    """Run ``session`` against ``server`` (in-process, or a transport) with the SDK's client."""

    async def main() -> None:
        async with Client(server, **options) as client:
            await session(client)

    anyio.run(main)


async def _each_tool(client: Client) -> None:
    """Every tool once, as an agent would chain them."""
    assert {t.name for t in (await client.list_tools()).tools} == TOOLS
    at = "2024-06-10T14:00:00+02:00"
    home = _data(await client.call_tool("remember", {"subject_id": SUBJECT, "text": HOME, "occurred_at": at}))
    assert home["action"] == "created" and home["memory"]["text"] == HOME
    email = _data(await client.call_tool("remember", {"subject_id": SUBJECT, "text": EMAIL, "kind": "procedure"}))

    hits = _data(await client.call_tool("recall", {"subject_id": SUBJECT, "query": "Où habite le membre ?", "k": 3}))
    best = hits["results"][0]  # compact by default: what the model reads, and the id to act on
    assert set(best) == {"id", "text", "score", "occurred_at"} and best["text"] == HOME and best["score"] > 0
    assert best["id"] == home["memory"]["id"]
    assert datetime.fromisoformat(best["occurred_at"]) == datetime.fromisoformat(at)
    full = _data(await client.call_tool("recall", {"subject_id": SUBJECT, "query": "Où habite le membre ?",
                                                   "format": "full"}))
    assert full["results"][0]["memory"]["text"] == HOME and "signals" in full["results"][0]
    ctx = _data(await client.call_tool("assemble_context", {"subject_id": SUBJECT, "query": "adresse du membre"}))
    assert set(ctx) == {"prompt", "ids", "stats"} and "Villeurbanne" in ctx["prompt"] and ctx["stats"]["count"] >= 1
    assert home["memory"]["id"] in ctx["ids"] and len(ctx["ids"]) == ctx["stats"]["count"]
    around = len(json.dumps(ctx, ensure_ascii=False)) - len(json.dumps(ctx["prompt"], ensure_ascii=False))
    # the prompt, its ids and counts (team_procedures and team_conflicts among them): no record JSON
    assert around < 240 + 45 * len(ctx["ids"])
    whole = _data(await client.call_tool("assemble_context", {"subject_id": SUBJECT, "query": "adresse du membre",
                                                              "format": "full"}))
    assert whole["prompt"] == ctx["prompt"] and [r["memory"]["id"] for r in whole["memories"]] == [
        i for i in ctx["ids"] if i in {r["memory"]["id"] for r in whole["memories"]}]
    bad = _error(await client.call_tool("recall", {"subject_id": SUBJECT, "query": "q", "format": "xml"}))
    assert bad["code"] == "invalid_request" and "xml" not in json.dumps(bad)

    listed = _data(await client.call_tool("list_memories", {"subject_id": SUBJECT}))
    assert {m["id"] for m in listed["items"]} == {home["memory"]["id"], email["memory"]["id"]}
    forgot = _data(await client.call_tool("forget_memory", {"subject_id": SUBJECT, "memory_id": home["memory"]["id"]}))
    assert forgot == {"forgotten": home["memory"]["id"]}
    listed = _data(await client.call_tool("list_memories", {"subject_id": SUBJECT}))
    assert [m["id"] for m in listed["items"]] == [email["memory"]["id"]]


# ---- in-process -------------------------------------------------------------------------------


def test_an_agent_proposes_a_procedure_and_uses_it_only_once_approved(container: Container) -> None:
    from carnet.domain.procedures import Decision
    from carnet.services.door import operator

    text = "Pour un dégât des eaux, toujours demander des photos avant d'envoyer l'expert."

    async def propose(client: Client) -> None:
        await client.call_tool("remember", {"subject_id": SUBJECT, "text": HOME})
        made = _data(await client.call_tool("propose_procedure", {"text": text, "applies_when": ["dégât des eaux"]}))
        assert made["status"] == "proposed"
        assert _data(await client.call_tool("list_procedures", {})) == {"items": []}
        ctx = _data(await client.call_tool("assemble_context", {"subject_id": SUBJECT, "query": "un dégât des eaux"}))
        assert text not in ctx["prompt"]
        bad = _error(await client.call_tool("propose_procedure", {"text": "Rappeler le 06 12 34 56 78."}))
        assert bad["code"] == "procedure_personal_data"
        container.facade.decide_procedure(operator(TENANT, "sup", "supervisor"), procedure_id=made["id"],
                                          decision=Decision.APPROVE)  # a person, not the model
        assert [p["id"] for p in _data(await client.call_tool("list_procedures", {}))["items"]] == [made["id"]]
        ctx = _data(await client.call_tool("assemble_context", {"subject_id": SUBJECT, "query": "un dégât des eaux"}))
        assert text in ctx["prompt"] and ctx["stats"]["team_procedures"] == 1
        names = {t.name for t in (await client.list_tools()).tools}
        assert not {n for n in names if "approve" in n or "retire" in n or "reject" in n}

    _with(build_server(container.facade, principal=with_key(container, _key(container))), propose)


@pytest.mark.parametrize("mode", ["auto", "legacy"])  # direct dispatch, and JSON-RPC over memory streams
def test_in_process_each_tool(container: Container, mode: str) -> None:
    _with(build_server(container.facade, principal=with_key(container, _key(container))), _each_tool, mode=mode)


def test_a_dpo_only_key_may_not_remember_but_may_list(container: Container) -> None:
    agent = build_server(container.facade, principal=with_key(container, _key(container)))
    dpo = build_server(container.facade, principal=with_key(container, _key(container, roles=("dpo",))))

    async def write(client: Client) -> None:
        _data(await client.call_tool("remember", {"subject_id": SUBJECT, "text": HOME}))

    async def refused(client: Client) -> None:
        r = await client.call_tool("remember", {"subject_id": SUBJECT, "text": EMAIL})
        assert _error(r)["code"] == "forbidden"
        assert len(_data(await client.call_tool("list_memories", {"subject_id": SUBJECT}))["items"]) == 1

    _with(agent, write)
    _with(dpo, refused)


def test_another_tenant_does_not_see_the_subject(container: Container) -> None:
    ours = build_server(container.facade, principal=with_key(container, _key(container)))
    theirs = build_server(container.facade, principal=with_key(container, _key(container, tenant="mutuelle-sud")))
    ids: list[str] = []

    async def write(client: Client) -> None:
        ids.append(_data(await client.call_tool("remember", {"subject_id": SUBJECT, "text": HOME}))["memory"]["id"])

    async def look(client: Client) -> None:
        for name, args in (("recall", {"query": "adresse"}), ("assemble_context", {"query": "adresse"}),
                           ("list_memories", {}), ("forget_memory", {"memory_id": ids[0]})):
            error = _error(await client.call_tool(name, {"subject_id": SUBJECT, **args}))
            assert error["code"] in ("subject_not_found", "memory_not_found"), (name, error)

    _with(ours, write)
    _with(theirs, look)
    _with(ours, lambda client: _still_there(client, ids[0]))


async def _still_there(client: Client, memory_id: str) -> None:
    listed = _data(await client.call_tool("list_memories", {"subject_id": SUBJECT}))
    assert [m["id"] for m in listed["items"]] == [memory_id]


def test_bad_arguments_name_the_fields_never_the_values(container: Container) -> None:
    async def session(client: Client) -> None:
        r = await client.call_tool("remember", {"subject_id": "Jean Dupont", "text": "x", "importance": 2})
        error = _error(r)
        assert error["code"] == "invalid_request"
        assert {tuple(f["loc"]) for f in error["fields"]} == {("subject_id",), ("importance",)}
        assert "Jean Dupont" not in _text(r)
        assert _error(await client.call_tool("recall", {"subject_id": SUBJECT, "query": "q", "extra": 1}))[
            "code"] == "invalid_request"
        with pytest.raises(MCPError):
            await client.call_tool("no_such_tool", {})

    _with(build_server(container.facade, principal=with_key(container, _key(container))), session)


def test_the_key_is_checked_at_every_call_and_rate_limited(container: Container) -> None:
    limited = _key(container, rate="2/minute")
    revoked = _key(container)

    async def over_budget(client: Client) -> None:
        for _ in range(2):
            await client.call_tool("recall", {"subject_id": SUBJECT, "query": "adresse"})
        error = _error(await client.call_tool("recall", {"subject_id": SUBJECT, "query": "adresse"}))
        assert error["code"] == "rate_limited" and error["retry_after"] >= 1

    async def after_revocation(client: Client) -> None:
        revoke_key(container.deps.catalog, key_id=revoked.split("_")[1])
        error = _error(await client.call_tool("recall", {"subject_id": SUBJECT, "query": "adresse"}))
        assert error["code"] == "unauthenticated"

    _with(build_server(container.facade, principal=with_key(container, limited)), over_budget)
    _with(build_server(container.facade, principal=with_key(container, revoked)), after_revocation)


# ---- stdio ------------------------------------------------------------------------------------

runner = CliRunner()


def _stdio_env(settings: Settings, key: str | None) -> dict[str, str | None]:
    return {"CARNET_KEY_DIR": str(settings.resolved_key_dir), "CARNET_API_KEY": key}


@pytest.mark.slow
def test_stdio_serves_each_tool(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys")
    plane = build_control_plane(settings)  # a key, without opening the shard: the server process owns it
    key, record = create_key(plane.catalog, plane.pepper, tenant=TENANT, roles=["agent"])
    plane.catalog.close()
    env = {k: v for k, v in _stdio_env(settings, key).items() if v is not None}
    params = StdioServerParameters(command=sys.executable, env=env,
                                   args=["-m", "carnet", "mcp", "--data-dir", str(settings.data_dir)])
    stderr = tmp_path / "stderr.log"
    with stderr.open("w") as errlog:
        _with(stdio_client(params, errlog=errlog), _each_tool)
    logs = stderr.read_text()
    assert "mcp_stdio_ready" in logs and record.key_id in logs
    assert "mcp_stdio_stopped" in logs  # stdin closed: the container was closed, its audit queue flushed
    for secret in (SUBJECT, "Villeurbanne", key):
        assert secret not in logs


def test_stdio_refuses_to_start_without_a_valid_key(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys")
    args = ["mcp", "--data-dir", str(settings.data_dir)]
    missing = runner.invoke(cli, args, env=_stdio_env(settings, None))
    assert missing.exit_code == 2 and "CARNET_API_KEY" in missing.output
    wrong = runner.invoke(cli, args, env=_stdio_env(settings, "crn_0123456789ab_" + "x" * 40))
    assert wrong.exit_code == 2 and "unknown or revoked API key" in wrong.output
    assert "Traceback" not in missing.output + wrong.output


def test_stdio_refuses_clearly_while_another_process_owns_the_store(container: Container) -> None:
    # `container` holds the shard, as a running `carnet serve` would.
    result = runner.invoke(cli, ["mcp", "--data-dir", str(container.settings.data_dir)],
                           env=_stdio_env(container.settings, _key(container)))
    assert result.exit_code == 2
    assert "held by another process" in result.output and "/mcp" in result.output
    assert "Traceback" not in result.output


# ---- streamable HTTP --------------------------------------------------------------------------


def test_http_serves_each_tool_behind_the_bearer_key(container: Container, capfd: pytest.CaptureFixture[str]) -> None:
    key = _key(container)

    async def main(base: str) -> None:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=30) as http, Client(
            streamable_http_client(f"{base}/mcp", http_client=http)
        ) as client:
            await _each_tool(client)

    with running(create_app(container)) as base:
        anyio.run(main, base)
        schema = httpx.get(f"{base}/openapi.json", timeout=30)
    assert schema.status_code == 200 and not any(p.startswith("/mcp") for p in schema.json()["paths"])
    out = capfd.readouterr()
    logs = out.out + out.err
    assert "route=/mcp" in logs and key.split("_")[1] in logs, logs[-2000:]
    for secret in (SUBJECT, "Villeurbanne", key):
        assert secret not in logs


def test_http_refuses_requests_without_a_valid_key(container: Container) -> None:
    hello = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    with running(create_app(container)) as base, httpx.Client(base_url=base, timeout=30) as http:
        for headers in ({}, {"Authorization": "Bearer crn_0123456789ab_" + "x" * 40}, {"Authorization": "Basic x"}):
            r = http.post("/mcp", json=hello, headers={"Accept": "application/json, text/event-stream", **headers})
            assert r.status_code == 401, r.text
            assert r.json()["error"]["code"] == "unauthenticated" and r.headers["WWW-Authenticate"] == "Bearer"
