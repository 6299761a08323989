"""Admission control: a bounded number of requests at work, a bounded waiting room, a deadline.

Admission covers every entrypoint that does work: REST under ``/api/v1`` (but the intake status, a
long poll) and MCP over HTTP (``/mcp``: each POST carries one JSON-RPC message, a tool call among
them; a tool call used to run beside full REST slots, issue 46 finding 7). Such a request takes one of
``slots`` once its body has been read whole (``carnet.entrypoints.http.body_limit``, in front, bounds
that read in size and time): no request holds a slot while it waits on the client (finding 4). It
gives the slot back when its answer is whole, before it is written to the client
(``carnet.entrypoints.http.held_answer``; a streamed answer over 1 MB keeps it to its end). When none is
free it waits, with at most ``max_queue`` others, until ``deadline`` seconds after it arrived (the
access log stamps ``state["arrived"]``: the time it spent at the authentication gate counts); a
request that finds the waiting room full, or whose deadline passes, gets ``503 overloaded`` with
``Retry-After`` at once. Nothing of a refused request ran: its body was never parsed, so a refused
write wrote nothing, and any request may be sent again. An admitted one is never cancelled here: a
write is refused or done.

The waiting room is also kept short by what a wait will cost: a request that finds no free slot is
refused at once when the wait it can expect, the requests ahead of it (and itself) times the time a
request has recently held a slot (a moving average) divided by the slots, is longer than
``queue_target`` (``CARNET_API__QUEUE_TARGET_MS``). Past capacity a request then either starts within
about that target or is told at once to come back, instead of waiting out the whole deadline first:
the accepted requests' tail stays near one target plus one service time, and the refusals cost the
event loop nothing more than their answer. The deadline stays the bound for any one wait.

Why slots and not only the thread pool: sync routes run in Starlette's worker threads (40 by
default), and a thread pool queues without bound or deadline. The default (``default_slots``) is one
per CPU core, at most half the pool (so ``/healthz``, ``/readyz`` and ``/metrics``, never gated and
never refused, always find a thread): the embedded stack's work (embedding, vector search, sealing)
is CPU-bound, a question's forward already runs on every core, and the rest of a request holds the
interpreter lock, so more requests at once only lengthen each one's service time. Measured on 2 cores
(docs/benchmarks.md, "Load" and "Two slots on two cores"): 20 slots gave p99 4.4 s at 25 requests/s
where 4 gave 0.9 s; at three times capacity 2 slots kept the accepted p99 at 228–230 ms where 4 gave
284–332 ms. With backends that wait on the network (Qdrant server, Vault, PostgreSQL), raise
``CARNET_API__MAX_CONCURRENCY``.

The middleware sits behind the authentication gate (``carnet.entrypoints.http.gate``): a flood of bad keys is
refused there and never takes a slot; a key lookup that cannot get a thread before the deadline is
refused there the same way (``503 overloaded``), so no request waits unbounded at the door either.
Refusals are counted in ``carnet_http_overloaded_total{route, reason}`` (``route`` is the path
template, ``reason`` ``queue_full``, ``expected_wait`` or ``deadline``); ``carnet_http_admission_waiting`` and
``…_in_flight`` show the state.
"""

from __future__ import annotations

import math
import os
import time

import anyio
import anyio.to_thread
from prometheus_client import Counter, Gauge
from starlette.types import ASGIApp, Receive, Scope, Send

from carnet.entrypoints.http.gate import answer
from carnet.entrypoints.http.held_answer import HeldAnswer
from carnet.entrypoints.http.overload import route_template, time_left
from carnet.errors import Overloaded

_REST, _MCP = "/api/v1/", "/mcp"
_SMOOTHING = 0.1  # weight of the newest slot hold in the moving average (about the last ten requests)
_INTAKE_STATUS = "/api/v1/intakes/"


def _admitted(path: str) -> bool:
    return path.startswith(_REST) or path == _MCP or path.startswith(_MCP + "/")


def _long_poll(scope: Scope) -> bool:
    """``GET /api/v1/intakes/{id}`` (``?wait=true`` holds it up to a minute, asleep, on no thread):
    a slot held while it sleeps would refuse work for nothing. Its reads are single-row lookups."""
    return bool(scope["method"] == "GET" and str(scope["path"]).startswith(_INTAKE_STATUS))


class Admission:
    def __init__(self, app: ASGIApp, *, slots: int | None, max_queue: int, deadline: float, refused: Counter,
                 waiting: Gauge, in_flight: Gauge, queue_target: float | None = None) -> None:
        self.app = app
        self._slots, self._max_queue, self._deadline = slots, max_queue, deadline
        self._target = deadline if queue_target is None else queue_target
        self._hold: float | None = None  # moving average of the seconds an admitted request holds its slot
        self._refused = refused
        self._sem: anyio.Semaphore | None = None  # made on the server's event loop, at the first request
        self._waiting = 0
        self._retry_after = max(1, math.ceil(deadline))
        waiting.set_function(lambda: self._waiting)
        in_flight.set_function(self._in_flight)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _admitted(str(scope["path"])) or _long_poll(scope):
            await self.app(scope, receive, send)
            return
        sem = self._semaphore()
        if sem.value == 0 and self._waiting >= self._max_queue:
            await self._refuse(scope, send, "queue_full")
            return
        if sem.value == 0 and self.expected_wait(ahead=self._waiting) > self._target:
            await self._refuse(scope, send, "expected_wait")
            return
        left = time_left(scope, self._deadline)
        if left <= 0:
            await self._refuse(scope, send, "deadline")
            return
        self._waiting += 1
        try:
            # On a timeout anyio gives a slot handed over at that very moment back to the semaphore.
            with anyio.move_on_after(left) as waited:
                await sem.acquire()
        finally:
            self._waiting -= 1
        if waited.cancelled_caught:
            await self._refuse(scope, send, "deadline")
            return
        started, freed = time.perf_counter(), False

        def free() -> None:  # once: when the answer is whole (before it is written), or when the app ends
            nonlocal freed
            if not freed:
                freed = True
                sem.release()
                self._held(time.perf_counter() - started)

        held = HeldAnswer(send, done=free)
        try:
            await self.app(scope, receive, held)
        finally:
            free()
        await held.flush()  # an answer the app left without its last message (none of ours)

    def expected_wait(self, *, ahead: int) -> float:
        """Seconds a request that finds every slot taken can expect to wait with ``ahead`` others
        before it: each slot frees up once per average hold, so the queue moves ``slots`` per hold.
        0 until a request has been served (nothing to go by yet)."""
        if self._hold is None or not self._slots:
            return 0.0
        return (ahead + 1) * self._hold / self._slots

    def _held(self, seconds: float) -> None:
        self._hold = seconds if self._hold is None else self._hold + _SMOOTHING * (seconds - self._hold)

    def _semaphore(self) -> anyio.Semaphore:
        if self._sem is None:
            threads = int(anyio.to_thread.current_default_thread_limiter().total_tokens)
            n = self._slots or default_slots(threads=threads, cores=os.cpu_count() or 1)
            self._sem = anyio.Semaphore(n, max_value=n, fast_acquire=True)
            self._slots = n
        return self._sem

    async def _refuse(self, scope: Scope, send: Send, reason: str) -> None:
        self._refused.labels(route_template(scope), reason).inc()
        await answer(send, Overloaded(retry_after=self._retry_after))

    def _in_flight(self) -> int:
        if self._sem is None or self._slots is None:
            return 0
        return self._slots - self._sem.value


def default_slots(*, threads: int, cores: int) -> int:
    """One slot per core, at most half the worker threads, at least one (module doc)."""
    return max(1, min(threads // 2, cores))
