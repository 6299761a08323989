"""MCP over HTTP is inside admission control (issue 46, finding 7), over real HTTP.

One slot, a waiting room of one. With the slot held by a REST assemble (its query embedding waits) and
the waiting room taken, another tenant's MCP ``recall`` gets ``503 overloaded`` like a REST request,
instead of running beside the full slots; once the slot is free, MCP answers again. ``GET /mcp``
(an event stream) is refused with 405 at once instead of held open."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from carnet.bootstrap.wiring import build
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.server import running
from carnet.ports import Embedder
from carnet.services.apikeys import create_key
from carnet.settings.root import Settings
from tests.support.held_embedder import HeldEmbedder

SUBJECT = "ADH-4242"
_MCP_HEADERS = {"Accept": "application/json, text/event-stream"}
_PROMPT_S = 5.0


@pytest.fixture
def clients(tmp_path: Path, embedder: Embedder) -> Iterator[tuple[httpx.Client, httpx.Client, HeldEmbedder]]:
    held = HeldEmbedder(embedder)
    settings = Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys",
                        api={"max_concurrency": 1, "max_queue": 1, "request_deadline_ms": 20_000,
                             "queue_target_ms": 60_000})
    container = build(settings, embedder=held)
    rest_key, _ = create_key(container.deps.catalog, container.pepper, tenant="assur-nord", roles=["agent"])
    mcp_key, _ = create_key(container.deps.catalog, container.pepper, tenant="banque-sud", roles=["agent"])
    try:
        with running(create_app(container)) as base, httpx.Client(
                base_url=base, headers={"Authorization": f"Bearer {rest_key}"}, timeout=30) as rest, httpx.Client(
                base_url=base, headers={"Authorization": f"Bearer {mcp_key}", **_MCP_HEADERS}, timeout=30) as mcp:
            for api in (rest, mcp):
                assert api.post(f"/api/v1/subjects/{SUBJECT}/memories",
                                json={"text": "Le membre a un contrat habitation."}).status_code == 201
            yield rest, mcp, held
    finally:
        held.release.set()
        container.close()


def _call(mcp: httpx.Client, tool: str, arguments: dict[str, Any]) -> httpx.Response:
    return mcp.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                  "params": {"name": tool, "arguments": arguments}})


def _gauge(api: httpx.Client, name: str) -> float:
    found = re.search(rf"^{name} ([0-9.]+)$", api.get("/metrics").text, re.MULTILINE)
    assert found, name
    return float(found.group(1))


def test_mcp_tool_calls_wait_for_the_same_slots_as_rest(
        clients: tuple[httpx.Client, httpx.Client, HeldEmbedder]) -> None:
    rest, mcp, held = clients
    assemble = {"subject_id": SUBJECT, "query": "Quel est le contrat du membre ?"}
    with ThreadPoolExecutor(2) as pool:
        held.hold.set()
        first = pool.submit(rest.post, "/api/v1/context/assemble", json=assemble)
        assert held.entered.wait(10)
        held.hold.clear()
        second = pool.submit(rest.post, "/api/v1/context/assemble", json=assemble)
        deadline = time.monotonic() + 10
        while _gauge(rest, "carnet_http_admission_waiting") < 1:
            assert time.monotonic() < deadline, "the second request never waited"
            time.sleep(0.02)

        started = time.monotonic()
        refused = [_call(mcp, "recall", {"subject_id": SUBJECT, "query": "contrat"}),
                   _call(mcp, "assemble_context", {"subject_id": SUBJECT, "query": "contrat"})]
        assert time.monotonic() - started < _PROMPT_S
        for r in refused:
            assert r.status_code == 503, r.text
            assert r.json()["error"]["code"] == "overloaded" and int(r.headers["Retry-After"]) >= 1
        held.release.set()
        assert first.result(30).status_code == 200 and second.result(30).status_code == 200
    answered = _call(mcp, "recall", {"subject_id": SUBJECT, "query": "contrat"})
    assert answered.status_code == 200 and "habitation" in answered.text
    assert 'carnet_http_overloaded_total{reason="queue_full",route="/mcp"} 2.0' in rest.get("/metrics").text


def test_no_event_stream_is_held_open(clients: tuple[httpx.Client, httpx.Client, HeldEmbedder]) -> None:
    _, mcp, _ = clients
    started = time.monotonic()
    for method in ("GET", "DELETE"):
        r = mcp.request(method, "/mcp", headers={"Accept": "text/event-stream"}, timeout=_PROMPT_S)
        assert r.status_code == 405, r.text
        assert r.json()["error"]["code"] == "method_not_allowed" and r.headers["Allow"] == "POST"
    assert time.monotonic() - started < _PROMPT_S
