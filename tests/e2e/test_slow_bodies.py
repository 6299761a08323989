"""Slow request bodies never hold an admission slot (issue 46, finding 4), over real HTTP.

One slot, a waiting room of one, a 200 ms admission deadline, a 1 s body deadline. Two connections
with a valid key announce a body and send it a byte at a time, slower than that deadline: another
tenant's requests are still answered at once, the slow key's third body is refused (``429``: two
bodies of one key read at once at most), and the slow ones get ``408 request_timeout`` (JSON) with the
connection closed. A body that arrives slowly but within its deadline is served: the time
spent waiting on it does not count against the admission deadline."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from carnet.bootstrap.wiring import build
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.server import running
from carnet.ports import Embedder
from carnet.services.apikeys import create_key
from carnet.settings.root import Settings

_BODY_DEADLINE_MS = 1000
_PROMPT_S = 5.0  # "at once", with room for a loaded machine; far from the slow clients' own time


@dataclass
class Served:
    base: str
    host: str
    port: int
    slow_key: str
    other: httpx.Client


@pytest.fixture
def served(tmp_path: Path, embedder: Embedder) -> Iterator[Served]:
    settings = Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys",
                        api={"max_concurrency": 1, "max_queue": 1, "request_deadline_ms": 200,
                             "queue_target_ms": 60_000, "body_read_deadline_ms": _BODY_DEADLINE_MS,
                             "body_reads_per_key": 2})
    container = build(settings, embedder=embedder)
    slow_key, _ = create_key(container.deps.catalog, container.pepper, tenant="assur-nord", roles=["agent"])
    other_key, _ = create_key(container.deps.catalog, container.pepper, tenant="banque-sud", roles=["agent"])
    try:
        with running(create_app(container)) as base, httpx.Client(
                base_url=base, headers={"Authorization": f"Bearer {other_key}"}, timeout=30) as other:
            url = httpx.URL(base)
            yield Served(base, str(url.host), int(url.port or 80), slow_key, other)
    finally:
        container.close()


def _open(s: Served, head: str) -> socket.socket:
    conn = socket.create_connection((s.host, s.port), timeout=10)
    conn.sendall(head.encode())
    return conn


def _head(s: Served, *, length: int | None) -> str:
    framing = f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked"
    return (f"POST /api/v1/subjects/ADH-0001/memories HTTP/1.1\r\nHost: {s.host}\r\n"
            f"Authorization: Bearer {s.slow_key}\r\nContent-Type: application/json\r\n{framing}\r\n\r\n")


def _answer(conn: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and body of the one answer on ``conn``, read until the server closes it."""
    data = b""
    while chunk := conn.recv(65536):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), {k.lower(): v for k, v in headers.items()}, body


def test_slow_bodies_hold_no_slot_and_get_408(served: Served) -> None:
    # A first write warms what a process loads once (run alone, it took ~1.1 s, past the slow bodies'
    # 1 s deadline, so the third body below found their reads already ended): the clock starts warm.
    served.other.post("/api/v1/subjects/ADH-0003/memories", json={"text": "Le membre a un contrat auto."})
    slow = [_open(served, _head(served, length=200)), _open(served, _head(served, length=None))]
    slow[0].sendall(b'{"te')
    slow[1].sendall(b"4\r\n{\"te\r\n")
    try:
        time.sleep(0.3)  # both are inside the server, waiting on their bodies
        for _ in range(3):  # another tenant's requests, read and write, are served, not 503 overloaded
            started = time.monotonic()
            listed = served.other.get("/api/v1/subjects/ADH-0002/memories")
            written = served.other.post("/api/v1/subjects/ADH-0002/memories",
                                        json={"text": "Le membre préfère être rappelé le matin."})
            assert time.monotonic() - started < _PROMPT_S
            assert listed.status_code in (200, 404), listed.text
            assert written.status_code == 201, written.text
        # The slow key's own third body is refused at once: its connections hold nothing another key needs.
        third = httpx.post(f"{served.base}/api/v1/subjects/ADH-0001/memories", json={"text": "Le membre a appelé."},
                           headers={"Authorization": f"Bearer {served.slow_key}"}, timeout=_PROMPT_S)
        assert third.status_code == 429 and third.json()["error"]["code"] == "rate_limited", third.text
        assert int(third.headers["Retry-After"]) >= 1
        for conn in slow:
            conn.settimeout(_PROMPT_S + _BODY_DEADLINE_MS / 1000)
            status, headers, body = _answer(conn)  # read until the server closes the connection
            assert status == 408
            assert headers["connection"] == "close"
            assert json.loads(body)["error"]["code"] == "request_timeout"
    finally:
        for conn in slow:
            conn.close()
    assert served.other.get("/metrics").text.count('reason="deadline"') == 0  # nothing waited out a slot


def test_a_body_slower_than_the_admission_deadline_but_within_its_own_is_served(served: Served) -> None:
    body = json.dumps({"text": "Le membre a un contrat habitation."}).encode()
    conn = _open(served, _head(served, length=len(body)))
    try:
        conn.sendall(body[:5])
        time.sleep(0.5)  # longer than the 200 ms admission deadline, shorter than the 1 s body deadline
        conn.sendall(body[5:])
        conn.settimeout(_PROMPT_S)
        answer = conn.recv(65536)
    finally:
        conn.close()
    assert answer.startswith(b"HTTP/1.1 201"), answer[:200]
