"""Hostile values at every edge (REST, intake messages, MCP): generated, not listed.

Whatever the value, the answer is a 4xx with a code (never a 5xx, never an empty 200), nothing is
written, and the value is never echoed. The rules themselves are property-tested in
tests/unit/test_values.py; here they are shown to be the ones every edge applies."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp_types import CallToolResult, TextContent

from carnet.bootstrap.container import Container
from carnet.domain.reconcile import values
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.server import running
from carnet.entrypoints.mcp import build_server
from carnet.entrypoints.mcp.auth import with_key
from carnet.services.apikeys import create_key

S = "ADH-7"
OK_TEXT = "Le membre est client depuis longtemps."
FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@dataclass
class Stack:
    http: httpx.Client
    container: Container
    key: str


@pytest.fixture
def stack(container: Container) -> Iterator[Stack]:
    key, _ = create_key(container.deps.catalog, container.pepper, tenant="t1", roles=["agent", "dpo", "admin"])
    with running(create_app(container)) as base, httpx.Client(
        base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=30
    ) as client:
        yield Stack(client, container, key)


# --- hostile values --------------------------------------------------------------------------------

_OFFSETS = st.sampled_from(["Z", "+14:00", "-14:00", "+00:00", "-12:00", "+05:30"])


def _iso(year: int, offset: str) -> str:
    return f"{year:04d}-12-31T23:59:59{offset}" if year > 2000 else f"{year:04d}-01-01T00:00:00{offset}"


out_of_range_dates = st.one_of(
    st.builds(_iso, st.integers(2200, 9999), _OFFSETS),
    st.builds(_iso, st.integers(1, 1899), _OFFSETS),
    st.just("9999-12-31T23:59:59-14:00"), st.just("0001-01-01T00:00:00+14:00"),
)
not_date_json = st.one_of(st.integers(-2**70, 2**70), st.booleans(), st.floats(allow_nan=False, allow_infinity=False),
                          st.integers(0, 2**40).map(str), st.lists(st.integers(), max_size=2))
hostile_dates = st.one_of(out_of_range_dates, not_date_json)

_CONTROL = st.sampled_from([chr(c) for c in range(0x20) if chr(c) not in "\n\t"] + ["\x7f", "\x85", "\ud800"])
dirty_texts = st.builds(lambda head, bad, tail: head + bad + tail,
                        st.text(alphabet="abcdé ", max_size=12), _CONTROL, st.text(alphabet="xyz", max_size=12))
only_nul = st.integers(1, 20).map(lambda n: "\x00" * n)
hostile_texts = st.one_of(dirty_texts, only_nul)
not_a_string = st.one_of(st.integers(), st.booleans(), st.floats(allow_nan=False, allow_infinity=False), st.just([]),
                         st.just({}))
huge_ints = st.one_of(st.integers(2**53, 2**80), st.integers(-2**80, -2**53))
not_an_int = st.one_of(st.integers(1, 99).map(str), st.booleans(), st.floats(1.5, 99.5), st.just(None))
bad_rates = st.one_of(st.sampled_from(["1/0 second", "0/second", "0 per minute", "1/0 minutes", "-1/second",
                                       "1/second; 2/minute", "10/1000000000 seconds"]),
                      st.text(alphabet="abc/0 ", min_size=1, max_size=20))


# --- assertions ------------------------------------------------------------------------------------

_FIXED = " ".join((values.DATETIME_MESSAGE, values.TEXT_MESSAGE, values.LABEL_MESSAGE, values.RATE_MESSAGE))


def _shown(value: object) -> str | None:
    """The part of a value that, if found in an answer, would be an echo (None: too common to tell, or
    part of the rules' own fixed messages)."""
    if isinstance(value, str) and len(value.strip("\x00")) >= 6 and value not in _FIXED:
        return value
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**9:
        return str(value)
    return None


def _refused(r: httpx.Response, value: object) -> None:
    assert 400 <= r.status_code < 500, (r.status_code, r.text)
    assert r.status_code not in (401, 403)
    assert isinstance(r.json()["error"]["code"], str)
    shown = _shown(value)
    if shown is not None:
        assert shown not in r.text and json.dumps(shown)[1:-1] not in r.text


def _nothing_for(http: httpx.Client, subject: str = S) -> None:
    r = http.get(f"/api/v1/subjects/{subject}/memories", params={"status": "any"})
    assert r.status_code == 404, r.text


# --- the example first, by every route that takes a date -------------------------------------

FAR = "9999-12-31T23:59:59-14:00"


def test_an_out_of_range_date_is_refused_by_every_route(stack: Stack) -> None:
    http = stack.http
    r = http.post(f"/api/v1/subjects/{S}/memories", json={"text": OK_TEXT, "occurred_at": FAR})
    _refused(r, FAR)
    assert r.status_code == 400
    _refused(http.post(f"/api/v1/subjects/{S}/memories", json={"memories": [{"text": OK_TEXT, "occurred_at": FAR}]}),
             FAR)
    _refused(http.post(f"/api/v1/subjects/{S}/messages", json={"messages": [
        {"role": "user", "content": OK_TEXT, "at": FAR}]}), FAR)
    _nothing_for(http)

    made = http.post(f"/api/v1/subjects/{S}/memories", json={"text": OK_TEXT})
    assert made.status_code == 201, made.text
    mid = made.json()["memory"]["id"]
    before = http.get(f"/api/v1/subjects/{S}/memories/{mid}").json()
    _refused(http.patch(f"/api/v1/subjects/{S}/memories/{mid}", json={"occurred_at": FAR}), FAR)
    assert http.get(f"/api/v1/subjects/{S}/memories/{mid}").json()["valid_from"] == before["valid_from"]
    _refused(http.put(f"/api/v1/subjects/{S}/relationship-end", json={"ended_at": FAR}), FAR)
    assert http.get(f"/api/v1/subjects/{S}/retention").json()["relationship_end"] is None
    assert http.get(f"/api/v1/subjects/{S}/export").json()["count"] == 1


# --- generated values, REST ----------------------------------------------------------------------------

@FAST
@given(value=hostile_dates)
def test_rest_dates(stack: Stack, value: object) -> None:
    http = stack.http
    _refused(http.post(f"/api/v1/subjects/{S}/memories", json={"text": OK_TEXT, "occurred_at": value}), value)
    _refused(http.post(f"/api/v1/subjects/{S}/messages",
                       json={"messages": [{"role": "user", "content": OK_TEXT, "at": value}]}), value)
    _refused(http.put(f"/api/v1/subjects/{S}/relationship-end", json={"ended_at": value}), value)
    _nothing_for(http)


@FAST
@given(value=st.one_of(hostile_texts, not_a_string))
def test_rest_texts(stack: Stack, value: object) -> None:
    # httpx cannot encode a lone surrogate as UTF-8 (the request never leaves); the rule that refuses
    # them is covered by tests/unit/test_values.py.
    assume(not (isinstance(value, str) and any(0xD800 <= ord(c) <= 0xDFFF for c in value)))
    http = stack.http
    for body in ({"text": value}, {"text": OK_TEXT, "category": value}, {"text": OK_TEXT, "tags": [value]},
                 {"text": OK_TEXT, "session_id": value}, {"text": OK_TEXT, "retention": value}):
        _refused(http.post(f"/api/v1/subjects/{S}/memories", json=body), value)
    _refused(http.post(f"/api/v1/subjects/{S}/messages", json={"messages": [{"role": "user", "content": value}]}),
             value)
    _refused(http.post(f"/api/v1/subjects/{S}/messages",
                       json={"session_id": value, "messages": [{"role": "user", "content": OK_TEXT}]}), value)
    _refused(http.post(f"/api/v1/subjects/{S}/search", json={"query": value}), value)
    _refused(http.post("/api/v1/context/assemble", json={"subject_id": S, "query": value}), value)
    _refused(http.put(f"/api/v1/subjects/{S}/legal-hold", json={"reference": value}), value)
    _nothing_for(http)


@FAST
@given(value=st.one_of(huge_ints, not_an_int))
def test_rest_integers(stack: Stack, value: object) -> None:
    http = stack.http
    _refused(http.post(f"/api/v1/subjects/{S}/search", json={"query": "adresse", "k": value}), value)
    for budget in ("max_memories", "memories_tokens", "max_episodes", "episodes_tokens", "max_procedures",
                   "procedures_tokens"):
        if value is None:
            continue  # null is "the server's default" for a budget
        _refused(http.post("/api/v1/context/assemble",
                           json={"subject_id": S, "query": "adresse", "budgets": {budget: value}}), value)
    _refused(http.post(f"/api/v1/subjects/{S}/memories/lookup", json={"identifier": "SIN-1", "limit": value}), value)
    if isinstance(value, int) and not isinstance(value, bool):  # a query parameter is text: only size matters
        _refused(http.get("/api/v1/audit", params={"after_seq": str(value)}), value)
        _refused(http.get(f"/api/v1/subjects/{S}/memories", params={"limit": str(value)}), value)
    _nothing_for(http)


@FAST
@given(value=st.one_of(st.just(True), st.just("0.5"), st.just("nan"), st.floats(1.01, 1e300),
                       st.floats(-1e300, -0.01)))
def test_rest_fractions(stack: Stack, value: object) -> None:
    _refused(stack.http.post(f"/api/v1/subjects/{S}/memories", json={"text": OK_TEXT, "importance": value}), value)
    _refused(stack.http.post(f"/api/v1/subjects/{S}/search", json={"query": "q", "min_relevance": value}), value)
    _nothing_for(stack.http)


@FAST
@given(value=bad_rates)
def test_rest_rate_limits(stack: Stack, value: str) -> None:
    before = len(stack.container.deps.catalog.api_keys("t1"))
    r = stack.http.post("/api/v1/admin/apikeys", json={"roles": ["agent"], "rate_limit": value})
    _refused(r, value)
    assert len(stack.container.deps.catalog.api_keys("t1")) == before


@FAST
@given(key=st.one_of(st.text(alphabet="\x00\x01\x7f\t", min_size=1, max_size=5).map(lambda k: "k" + k + "k"),
                     st.just("x" * 201)))
def test_rest_idempotency_keys(stack: Stack, key: str) -> None:
    http = stack.http
    headers = {"Idempotency-Key": key}
    for url, body in ((f"/api/v1/subjects/{S}/memories", {"text": OK_TEXT}),
                      (f"/api/v1/subjects/{S}/messages", {"messages": [{"role": "user", "content": OK_TEXT}]})):
        try:
            r = http.post(url, json=body, headers=headers)
        except httpx.LocalProtocolError:
            continue  # the client itself refuses to send such a header: nothing reached the server
        if r.status_code == 400 and not r.headers.get("content-type", "").startswith("application/json"):
            assert key not in r.text  # the HTTP parser refused the header before any route ran
            continue
        _refused(r, key)
    _nothing_for(http)


def test_unknown_fields_are_never_named(stack: Stack) -> None:
    secret = "Jean-Baptiste Lefèvre 06 12 34 56 78"
    r = stack.http.post(f"/api/v1/subjects/{S}/memories", json={"text": OK_TEXT, secret: 1})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_request"
    assert "Lefèvre" not in r.text and "Lef\\u00e8vre" not in r.text
    r = stack.http.post(f"/api/v1/subjects/{S}/search", json={"query": "q", "k": 0, secret: 1})
    fields = r.json()["error"]["fields"]
    assert ["body", "k"] in [f["loc"] for f in fields]
    assert "Lef" not in r.text
    _nothing_for(stack.http)


def test_timeout_bounds(stack: Stack) -> None:
    iid = "6f1c0f4e-3f0b-4a43-9a1d-2d9f4b8a6b11"
    for value in ("nan", "inf", "-1", "1e400", "0", "61"):
        r = stack.http.get(f"/api/v1/intakes/{iid}", params={"wait": "true", "timeout": value})
        assert r.status_code == 400, (value, r.text)


# --- generated values, MCP ----------------------------------------------------------------------------

def _mcp(stack: Stack, session: Callable[[Client], Awaitable[None]]) -> None:
    server = build_server(stack.container.facade, principal=with_key(stack.container, stack.key))

    async def main() -> None:
        async with Client(server) as client:
            await session(client)

    anyio.run(main)


def _tool_refused(r: CallToolResult, value: object) -> None:
    assert r.is_error and isinstance(r.structured_content, dict), r.content
    assert r.structured_content["error"]["code"] in ("invalid_request", "invalid_input", "invalid_budget")
    block = r.content[0]
    assert isinstance(block, TextContent)
    shown = _shown(value)
    if shown is not None:
        assert shown not in block.text and json.dumps(shown)[1:-1] not in block.text


@FAST
@given(date=hostile_dates, text=hostile_texts, number=st.one_of(huge_ints, not_an_int.filter(lambda v: v is not None)))
def test_mcp_tools(stack: Stack, date: object, text: str, number: object) -> None:
    async def session(client: Client) -> None:
        calls: list[tuple[str, dict[str, Any], object]] = [
            ("remember", {"subject_id": S, "text": OK_TEXT, "occurred_at": date}, date),
            ("remember", {"subject_id": S, "text": text}, text),
            ("remember", {"subject_id": S, "text": OK_TEXT, "category": text}, text),
            ("recall", {"subject_id": S, "query": text}, text),
            ("recall", {"subject_id": S, "query": "adresse", "k": number}, number),
            ("assemble_context", {"subject_id": S, "query": "adresse", "max_memories": number}, number),
            ("list_memories", {"subject_id": S, "limit": number}, number),
        ]
        for name, args, value in calls:
            _tool_refused(await client.call_tool(name, args), value)

    _mcp(stack, session)
    _nothing_for(stack.http)


def test_mcp_unknown_argument_names_are_never_echoed(stack: Stack) -> None:
    async def session(client: Client) -> None:
        r = await client.call_tool("remember", {"subject_id": S, "text": OK_TEXT, "Jean Dupont": 1})
        _tool_refused(r, "Jean Dupont")
        error = r.structured_content["error"] if isinstance(r.structured_content, dict) else {}
        assert all("Jean" not in str(f["loc"]) for f in error["fields"])

    _mcp(stack, session)
    _nothing_for(stack.http)


# --- CLI options ---------------------------------------------------------------------------------------

@FAST
@given(rate=bad_rates)
def test_cli_rate_limits(container: Container, rate: str) -> None:
    from typer.testing import CliRunner

    from carnet.entrypoints.cli.main import app

    before = len(container.deps.catalog.api_keys("t1"))
    result = CliRunner().invoke(app, ["apikey", "create", "--tenant", "t1", "--role", "agent", "--rate-limit", rate,
                                      "--data-dir", str(container.settings.data_dir)],
                                env={"CARNET_KEY_DIR": str(container.settings.resolved_key_dir)})
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert len(container.deps.catalog.api_keys("t1")) == before
    shown = _shown(rate)
    if shown is not None:
        assert shown not in result.output


@FAST
@given(value=out_of_range_dates)
def test_cli_datetimes(tmp_path_factory: pytest.TempPathFactory, value: str) -> None:
    from typer.testing import CliRunner

    from carnet.entrypoints.cli.main import app

    tmp = tmp_path_factory.mktemp("cli")
    result = CliRunner().invoke(app, ["backup", "reapply-erasures", "--since", value, "--data-dir", str(tmp / "d")],
                                env={"CARNET_KEY_DIR": str(tmp / "k")})
    assert result.exit_code == 2 and "1900" in result.output and value not in result.output
