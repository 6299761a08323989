"""Unauthenticated traffic costs the server little (issue 13, defect 6).

Authentication comes before the body is read; refused requests are audited in aggregate (one
``_system`` entry per source and window, carrying the count), counted in ``/metrics`` by reason, and
each client address has its own budget of unauthenticated attempts (429 past it), which a valid key
never spends from. REST and ``/mcp`` alike."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx
import pytest

from carnet.bootstrap.container import Container
from carnet.bootstrap.wiring import build
from carnet.entrypoints.http import gate
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.server import running
from carnet.ports import Embedder
from carnet.services.apikeys import create_key
from carnet.settings.root import Settings

MEMORIES = "/api/v1/subjects/X-1/memories"
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}
MCP_HEADERS_B = [(b"accept", b"application/json, text/event-stream")]
TOOLS_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


def _container(tmp_path: Path, embedder: Embedder, **api: Any) -> Container:
    return build(Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys", api=api), embedder=embedder)


@pytest.fixture
def limited(tmp_path: Path, embedder: Embedder) -> Iterator[Container]:
    c = _container(tmp_path, embedder, unauthenticated_rate_limit="5/minute")
    try:
        yield c
    finally:
        c.close()


def _key(c: Container) -> str:
    return create_key(c.deps.catalog, c.pepper, tenant="assur-nord", roles=["agent"])[0]


def _refusal_entries(c: Container) -> list[dict[str, Any]]:
    tally = getattr(c, "refusals", None)
    if tally is not None:
        tally.close()  # writes the open window
    c.audit.flush()
    return [dict(e.event.detail) for e in c.audit.log.entries("_system") if e.event.action == "access.denied"]


@pytest.mark.slow
def test_n_refused_requests_add_one_entry_per_source_and_window_not_n(container: Container,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # Past the address's budget (60 of the 120) each 429 is held back: 1 s each would be a minute of
    # waiting; the hold itself is checked in test_an_address_has_its_own_budget_of_unauthenticated_requests.
    monkeypatch.setattr(gate, "OVER_BUDGET_DELAY", 0.01)
    before = len(list(container.audit.log.entries("_system")))
    n = 120
    with running(create_app(container)) as base, httpx.Client(base_url=base, timeout=30) as http:
        codes = {http.get(MEMORIES, headers={"Authorization": f"Bearer crn_0123456789ab_{i:040d}"}).status_code
                 for i in range(n)}
    assert codes <= {401, 429}
    entries = _refusal_entries(container)
    # One source (loopback); the run may straddle a window boundary, never more.
    assert 1 <= len(list(container.audit.log.entries("_system"))) - before <= 2
    assert sum(int(str(d["count"])) for d in entries) == n
    assert {d["code"] for d in entries} == {"unauthenticated"} and len({d["source"] for d in entries}) == 1
    assert all("127.0.0.1" not in str(d) and "crn_" not in str(d) for d in entries)  # a keyed hash, not the address
    assert container.audit.verify("_system").ok


class _Receive:
    """An ASGI ``receive`` that records whether the app asked for the body."""

    def __init__(self, size: int) -> None:
        self.size, self.calls = size, 0

    async def __call__(self) -> dict[str, Any]:
        self.calls += 1
        return {"type": "http.request", "body": b"{" + b" " * (self.size - 2) + b"}", "more_body": False}


async def _asgi(app: Any, method: str, path: str, headers: list[tuple[bytes, bytes]],
                receive: _Receive) -> tuple[int, dict[bytes, bytes]]:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "path": path,
             "raw_path": path.encode(), "query_string": b"", "root_path": "", "scheme": "http",
             "headers": headers, "client": ("198.51.100.7", 40000), "server": ("127.0.0.1", 8080)}
    await app(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    return int(start["status"]), dict(start["headers"])


@pytest.mark.parametrize("path", [MEMORIES, "/mcp"])
@pytest.mark.parametrize("chunked", [False, True])
def test_a_keyless_large_body_is_refused_before_it_is_read(container: Container, path: str, chunked: bool) -> None:
    size = 2 * 1024 * 1024
    length = [(b"transfer-encoding", b"chunked")] if chunked else [(b"content-length", str(size).encode())]
    for auth in ([], [(b"authorization", b"Bearer crn_0123456789ab_" + b"x" * 40)]):
        receive = _Receive(size)
        status, headers = anyio.run(_asgi, create_app(container), "POST", path,
                                    [(b"content-type", b"application/json"), *MCP_HEADERS_B, *length, *auth],
                                    receive)
        assert (status, receive.calls) == (401, 0)
        assert headers[b"www-authenticate"] == b"Bearer"


def test_a_stalled_body_still_gets_its_401_at_once(container: Container) -> None:
    """Headers announce 2 MB, a few bytes follow, then nothing: the answer must not wait for the rest."""
    with running(create_app(container)) as base:
        url = urlsplit(base)
        with socket.create_connection((url.hostname, url.port), timeout=5) as s:
            s.sendall(b"POST " + MEMORIES.encode() + b" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 2097152\r\n\r\n{\"text\": \"")
            started = time.monotonic()
            reply = b""
            while b"\r\n\r\n" not in reply:
                chunk = s.recv(4096)  # the 5 s socket timeout fails the test if nothing comes
                assert chunk, "the server closed without answering"
                reply += chunk
            assert reply.startswith(b"HTTP/1.1 401") and time.monotonic() - started < 5


def test_an_address_has_its_own_budget_of_unauthenticated_requests(limited: Container) -> None:
    key = _key(limited)
    with running(create_app(limited)) as base, httpx.Client(base_url=base, timeout=30) as http:
        codes = [http.get(MEMORIES).status_code for _ in range(5)]
        started = time.monotonic()
        r = http.get(MEMORIES, headers={"Authorization": "Bearer crn_0123456789ab_" + "y" * 40})
        held = time.monotonic() - started
        assert codes == [401] * 5 and r.status_code == 429
        assert held >= gate.OVER_BUDGET_DELAY  # a client looping past its budget sends one a second at most
        assert r.json()["error"]["code"] == "rate_limited" and int(r.headers["retry-after"]) >= 1
        # The same address with a valid key is not affected: a valid key never spends the address's budget.
        ok = http.get(MEMORIES, headers={"Authorization": f"Bearer {key}"})
        assert ok.status_code == 404 and ok.json()["error"]["code"] == "subject_not_found"
        metrics = http.get("/metrics").text
    assert 'carnet_http_refused_total{reason="unauthenticated"} 5.0' in metrics
    assert 'carnet_http_refused_total{reason="address_budget"} 1.0' in metrics
    assert "127.0.0.1" not in metrics
    entries = _refusal_entries(limited)
    assert sum(int(str(d["count"])) for d in entries) == 6 and sum(int(str(d["rate_limited"])) for d in entries) == 1


def test_mcp_over_http_has_the_same_budget(limited: Container) -> None:
    key = _key(limited)
    with running(create_app(limited)) as base, httpx.Client(base_url=base, timeout=30) as http:
        codes = [http.post("/mcp", json=TOOLS_LIST, headers=MCP_HEADERS).status_code for _ in range(6)]
        assert codes == [401] * 5 + [429]
        ok = http.post("/mcp", json=TOOLS_LIST, headers={**MCP_HEADERS, "Authorization": f"Bearer {key}"})
        assert ok.status_code == 200, ok.text
        assert "remember" in ok.text


def test_x_forwarded_for_is_read_only_from_trusted_proxies(tmp_path: Path, embedder: Embedder) -> None:
    def spend(c: Container, forwarded: str) -> list[int]:
        with running(create_app(c)) as base, httpx.Client(base_url=base, timeout=30) as http:
            return [http.get(MEMORIES, headers={"X-Forwarded-For": f"{forwarded}{i}"}).status_code
                    for i in range(3)]

    untrusted = _container(tmp_path / "a", embedder, unauthenticated_rate_limit="2/minute")
    trusted = _container(tmp_path / "b", embedder, unauthenticated_rate_limit="2/minute",
                         trusted_proxies=["127.0.0.0/8"])
    try:
        assert spend(untrusted, "203.0.113.") == [401, 401, 429]  # the header is ignored: one address
        assert spend(trusted, "203.0.113.") == [401, 401, 401]  # three clients behind the proxy
    finally:
        untrusted.close()
        trusted.close()
