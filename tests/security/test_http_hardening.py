"""The low findings of the second red team (issue 46, finding 8), over real HTTP:

- a request head is bounded: a 1 MB header, 500 headers, or a header that never ends get
  ``431 headers_too_large`` (JSON) and the connection closed;
- what the HTTP parser refuses gets ``400 malformed_request`` in JSON, not uvicorn's plain text;
- every console answer carries the security headers, a 404 and the stylesheet included;
- the console login's 429 says when to come back (``Retry-After``);
- console sessions are bounded per tenant: one tenant's logins never end another tenant's session.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

from carnet.bootstrap.container import Container
from carnet.bootstrap.wiring import build
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.console.security import HEADERS
from carnet.entrypoints.http.server import running
from carnet.ports import Embedder
from carnet.services.apikeys import create_key
from carnet.settings.root import Settings
from tests.support.plain_browser import PlainBrowser


def _serve(tmp_path: Path, embedder: Embedder, **settings: Any) -> Iterator[tuple[str, Container]]:
    container = build(Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys", **settings), embedder=embedder)
    try:
        with running(create_app(container)) as base:
            yield base, container
    finally:
        container.close()


@pytest.fixture
def base(tmp_path: Path, embedder: Embedder) -> Iterator[str]:
    for served, _ in _serve(tmp_path, embedder, api={"unauthenticated_rate_limit": "3/minute"}):
        yield served


def _raw(base: str, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send ``request`` (in pieces: the server reads them as they come) and read the answer to the close."""
    url = httpx.URL(base)
    with socket.create_connection((str(url.host), int(url.port or 80)), timeout=10) as conn:
        try:
            for at in range(0, len(request), 64 * 1024):
                conn.sendall(request[at:at + 64 * 1024])
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused before the end of what we sent: the answer is already there
        data = b""
        try:
            while chunk := conn.recv(65536):
                data += chunk
        except ConnectionResetError:
            pass
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = {k.lower(): v for k, v in (line.split(": ", 1) for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def _refused(answer: tuple[int, dict[str, str], bytes], status: int, code: str) -> None:
    got, headers, body = answer
    assert got == status, (got, body[:200])
    assert headers["content-type"] == "application/json" and headers["connection"] == "close"
    assert json.loads(body)["error"]["code"] == code


def test_request_heads_are_bounded(base: str) -> None:
    big = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (1024 * 1024) + b"\r\n\r\n"
    _refused(_raw(base, big), 431, "headers_too_large")
    many = b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-H%d: v\r\n" % i for i in range(500)) + b"\r\n"
    _refused(_raw(base, many), 431, "headers_too_large")
    endless = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Endless: " + b"a" * (200 * 1024)  # never ends
    _refused(_raw(base, endless), 431, "headers_too_large")
    fine = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + b"X-Ok: " + b"a" * 8000 + b"\r\n\r\n"
    assert _raw(base, fine)[0] == 200


def test_what_the_parser_refuses_is_answered_in_json(base: str) -> None:
    for request in (b"GARBAGE\r\n\r\n", b"GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n",
                    b"POST /api/v1/context/assemble HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n"):
        _refused(_raw(base, request), 400, "malformed_request")


def test_every_console_answer_carries_the_security_headers(base: str) -> None:
    for path in ("/console/nowhere", "/console/static/console.css", "/console/login"):
        r = httpx.get(f"{base}{path}", timeout=30)
        for name, value in HEADERS.items():
            if name != "Cache-Control":
                assert r.headers.get(name) == value, (path, name)
    assert httpx.get(f"{base}/console/nowhere", timeout=30).status_code == 404


def test_the_console_login_429_says_when_to_come_back(base: str) -> None:
    with PlainBrowser(base) as browser:
        answers = [browser.login("crn_0123456789ab_" + "x" * 40) for _ in range(4)]
    assert [a.status_code for a in answers[:3]] == [401, 401, 401]
    assert answers[3].status_code == 429 and int(answers[3].headers["Retry-After"]) >= 1


def test_one_tenants_logins_never_end_another_tenants_session(tmp_path: Path, embedder: Embedder) -> None:
    for base, container in _serve(tmp_path, embedder, console={"max_sessions": 3, "max_sessions_per_tenant": 2}):
        catalog, pepper = container.deps.catalog, container.pepper
        other_key = create_key(catalog, pepper, tenant="banque-sud", roles=["agent"])[0]
        key = create_key(catalog, pepper, tenant="assur-nord", roles=["agent"])[0]
        with ExitStack() as browsers:
            _sessions_of_two_tenants(browsers, base, other_key, key)


def _sessions_of_two_tenants(browsers: ExitStack, base: str, other_key: str, key: str) -> None:
    other = browsers.enter_context(PlainBrowser(base))
    assert other.login(other_key).status_code == 303
    flood = [browsers.enter_context(PlainBrowser(base)) for _ in range(4)]
    for browser in flood:
        assert browser.login(key).status_code == 303
    assert other.request("GET", "/console/member").status_code == 200  # still logged in
    live = [b.request("GET", "/console/member").status_code for b in flood]
    assert live == [303, 303, 200, 200]  # the flooding tenant lost its own oldest sessions
