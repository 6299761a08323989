"""The round-robin client the assistants share, and the record of every request it sent.

Requests go to the APIs in turn. A connection refused (nothing was sent: an API process is down)
goes to the next API at once, as a load balancer retries another backend; any other transport
error (the request may have been received) is the caller's to retry with the same idempotency key.
Every attempt is recorded: route (the template, not the path), status (or ``transport``), the
error's code, when it started and ended, and which API answered.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx

TIMEOUT_S = 30.0  # above the server's own KMS and database timeouts: their 503 arrives before ours


@dataclass(frozen=True, slots=True)
class Call:
    route: str
    status: int | None  # None: no answer (transport error, timeout)
    code: str | None  # the error's code (``{"error": {"code"}}``), or the transport error's class
    start: float  # seconds since the run started
    end: float
    api: int

    @property
    def ms(self) -> float:
        return (self.end - self.start) * 1000


@dataclass(frozen=True, slots=True)
class Answer:
    status: int | None
    body: Any  # parsed JSON, or None
    code: str | None

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    @property
    def retryable(self) -> bool:
        """No answer, or a 503 (or 429): the same request may be sent again (with the same key)."""
        return self.status is None or self.status in (429, 503)


class RoundRobin:
    def __init__(self, bases: Sequence[str], *, started: float) -> None:
        self._clients = [httpx.Client(base_url=b, timeout=TIMEOUT_S) for b in bases]
        self._turn = itertools.count()
        self._started = started
        self._lock = threading.Lock()
        self.calls: list[Call] = []

    def close(self) -> None:
        for client in self._clients:
            client.close()

    def now(self) -> float:
        return time.monotonic() - self._started

    def send(self, method: str, route: str, path: str, *, key: str, json: Any = None,
             params: dict[str, Any] | None = None, headers: dict[str, str] | None = None) -> Answer:
        first = next(self._turn)
        for step in range(len(self._clients)):
            n = (first + step) % len(self._clients)
            start = self.now()
            try:
                r = self._clients[n].request(method, path, json=json, params=params,
                                             headers={"Authorization": f"Bearer {key}", **(headers or {})})
            except httpx.ConnectError as exc:  # refused: nothing sent, the next API takes it
                self._record(Call(route, None, type(exc).__name__, start, self.now(), n))
                continue
            except httpx.TransportError as exc:
                self._record(Call(route, None, type(exc).__name__, start, self.now(), n))
                return Answer(None, None, type(exc).__name__)
            body = _json(r)
            code = body.get("error", {}).get("code") if isinstance(body, dict) and r.status_code >= 400 else None
            self._record(Call(route, r.status_code, code, start, self.now(), n))
            return Answer(r.status_code, body, code)
        return Answer(None, None, "ConnectError")

    def _record(self, call: Call) -> None:
        with self._lock:
            self.calls.append(call)

    def snapshot(self) -> list[Call]:
        with self._lock:
            return list(self.calls)


def _json(r: httpx.Response) -> Any:
    try:
        return r.json()
    except ValueError:
        return None
