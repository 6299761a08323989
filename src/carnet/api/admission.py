"""Admission control: a bounded number of ``/api/v1`` requests at work, a bounded waiting room, a deadline.

A request under ``/api/v1`` takes one of ``slots`` before anything of its body is read; it gives the
slot back when its answer has been sent. When none is free it waits, at most ``deadline`` seconds and
with at most ``max_queue`` others; a request that finds the waiting room full, or whose deadline
passes, gets ``503 overloaded`` with ``Retry-After`` at once. Nothing of a refused request ran: its
body was never read, so a refused write wrote nothing, and any request may be sent again. An admitted
one is never cancelled here: a write is refused or done.

Why slots and not only the thread pool: sync routes run in Starlette's worker threads (40 by
default), and a thread pool queues without bound or deadline. The default is half the pool, so the
key lookups of requests still at the door, and ``/healthz``, ``/readyz`` and ``/metrics`` (never
gated, never refused), always find a thread. On a 2-core machine fewer slots also mean shorter
service times for those admitted: ``CARNET_API__MAX_CONCURRENCY``.

The middleware sits behind the authentication gate (``carnet.api.gate``): a flood of bad keys is
refused there and never takes a slot. Refusals are counted in
``carnet_http_overloaded_total{route, reason}`` (``route`` is the path template, ``reason``
``queue_full`` or ``deadline``); ``carnet_http_admission_waiting`` and ``…_in_flight`` show the state.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

import anyio
import anyio.to_thread
from prometheus_client import Counter, Gauge
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Receive, Scope, Send

from carnet.api.gate import answer
from carnet.errors import Overloaded

_ADMITTED = "/api/v1/"


class Admission:
    def __init__(self, app: ASGIApp, *, slots: int | None, max_queue: int, deadline: float,
                 routes: Sequence[BaseRoute], refused: Counter, waiting: Gauge, in_flight: Gauge) -> None:
        self.app = app
        self._slots, self._max_queue, self._deadline = slots, max_queue, deadline
        self._routes, self._refused = routes, refused
        self._sem: anyio.Semaphore | None = None  # made on the server's event loop, at the first request
        self._waiting = 0
        self._retry_after = max(1, math.ceil(deadline))
        waiting.set_function(lambda: self._waiting)
        in_flight.set_function(self._in_flight)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(_ADMITTED):
            await self.app(scope, receive, send)
            return
        sem = self._semaphore()
        if sem.value == 0 and self._waiting >= self._max_queue:
            await self._refuse(scope, send, "queue_full")
            return
        self._waiting += 1
        try:
            # On a timeout anyio gives a slot handed over at that very moment back to the semaphore.
            with anyio.move_on_after(self._deadline) as waited:
                await sem.acquire()
        finally:
            self._waiting -= 1
        if waited.cancelled_caught:
            await self._refuse(scope, send, "deadline")
            return
        try:
            await self.app(scope, receive, send)
        finally:
            sem.release()

    def _semaphore(self) -> anyio.Semaphore:
        if self._sem is None:
            threads = anyio.to_thread.current_default_thread_limiter().total_tokens
            n = self._slots or max(1, int(threads) // 2)
            self._sem = anyio.Semaphore(n, max_value=n, fast_acquire=True)
            self._slots = n
        return self._sem

    async def _refuse(self, scope: Scope, send: Send, reason: str) -> None:
        route = self._route(scope)
        if route is not None:
            scope["route"] = route  # the access log and the latency histogram label it by its template
        self._refused.labels(getattr(route, "path", "<unmatched>"), reason).inc()
        await answer(send, Overloaded(retry_after=self._retry_after))

    def _route(self, scope: Scope) -> BaseRoute | None:
        """The route the router would pick (looked up only for a refusal: the label is its template,
        never the raw path, which carries a subject id)."""
        partial = None
        for route in _flat(self._routes):
            match, _ = route.matches(scope)
            if match is Match.FULL:
                return route
            if match is Match.PARTIAL and partial is None:
                partial = route
        return partial

    def _in_flight(self) -> int:
        if self._sem is None or self._slots is None:
            return 0
        return self._slots - self._sem.value


def _flat(routes: Sequence[BaseRoute]) -> Iterator[BaseRoute]:
    """The app's routes, with those of each included router (FastAPI keeps them in the router it was
    given: ``include_router`` adds no prefix here, the routers carry theirs)."""
    for route in routes:
        inner = getattr(getattr(route, "original_router", None), "routes", None)
        if inner:
            yield from _flat(inner)
        else:
            yield route
