"""Request bodies are read whole here, bounded in size (413) and in time (408), before admission.

A body is the one part of a request that arrives at the client's pace. Reading it before the request
takes an admission slot (``carnet.entrypoints.http.admission`` sits behind this middleware) means no
slot is ever held while the server waits on a client: two connections sending a byte a second used
to hold every slot and refuse everyone else's requests ``503 overloaded`` (issue 46, finding 4).

- A ``Content-Length`` over the limit is refused before anything is read (413). A body without one
  (chunked) is counted as it arrives and refused the moment it passes the limit.
- The whole body must arrive within ``deadline`` seconds of the first read
  (``CARNET_API__BODY_READ_DEADLINE_MS``); past it the request gets ``408 request_timeout`` and the
  connection is closed. Nothing of the request ran, so it may be sent again.
- A request without a body (neither ``Content-Length`` nor ``Transfer-Encoding``) passes at once.
- One API key has at most ``per_key`` bodies being read at once (``CARNET_API__BODY_READS_PER_KEY``);
  one more gets ``429 rate_limited`` at once. What a key's slow connections hold is its own: memory
  (``per_key`` times the size limit per key) and nothing another key needs.

Refusals carry ``Connection: close``: the rest of an unread body is never parsed as a next request.
Doing this here rather than by raising from inside the app matters: FastAPI turns any error while it
reads a body into a 400. The cost is memory: a body under the limit is held while it arrives, by
authenticated callers only (the gate is in front) and within each key's request budget.
"""

from __future__ import annotations

import json
import time
from collections import Counter

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from carnet.entrypoints.http.overload import BODY_SECONDS
from carnet.entrypoints.presenters.errors import error_body
from carnet.errors import CarnetError, PayloadTooLarge, RateLimited, RequestTimeout


class _Gone(Exception):
    """The client went away while its body was being read: there is no one to answer."""


class BodyLimit:
    def __init__(self, app: ASGIApp, *, max_bytes: int, deadline: float, per_key: int) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.deadline = deadline
        self._per_key = per_key
        self._reading: Counter[str] = Counter()  # bodies being read, by key id

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        length = headers.get(b"content-length")
        if length == b"0" or (length is None and b"transfer-encoding" not in headers):
            await self.app(scope, receive, send)
            return
        if length is not None and (not length.isdigit() or int(length) > self.max_bytes):
            await refuse(send, PayloadTooLarge(f"body over {self.max_bytes} bytes"))
            return
        key = scope.get("state", {}).get("key_id")
        key = key if isinstance(key, str) else None
        if key is not None and self._reading[key] >= self._per_key:
            await refuse(send, RateLimited(retry_after=1))
            return
        try:
            body = await self._read_in_time(scope, receive, key)
        except _Gone:
            return
        except CarnetError as exc:  # 413 or 408
            await refuse(send, exc)
            return
        await self.app(scope, replay({"type": "http.request", "body": body, "more_body": False}, receive), send)

    async def _read_in_time(self, scope: Scope, receive: Receive, key: str | None) -> bytes:
        """The whole body within the deadline (``RequestTimeout`` past it), counted against ``key``'s
        bodies being read meanwhile; the time it took goes into the scope's state."""
        started = time.perf_counter()
        if key is not None:
            self._reading[key] += 1
        try:
            with anyio.move_on_after(self.deadline):
                return await self._read(receive)
            raise RequestTimeout(f"the body did not arrive within {self.deadline:g} s")
        finally:
            scope.setdefault("state", {})[BODY_SECONDS] = time.perf_counter() - started
            if key is not None:
                self._reading[key] -= 1
                if not self._reading[key]:
                    del self._reading[key]

    async def _read(self, receive: Receive) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                raise _Gone
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.max_bytes:
                raise PayloadTooLarge(f"body over {self.max_bytes} bytes")
            if not message.get("more_body", False):
                return b"".join(chunks)


async def refuse(send: Send, exc: CarnetError) -> None:
    """``exc`` in the REST shape, and the connection closed after it (the body was not read to its end)."""
    body = json.dumps(error_body(exc.code, exc.message)).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               (b"connection", b"close")]
    if "retry_after" in exc.context:
        headers.append((b"retry-after", str(exc.context["retry_after"]).encode()))
    await send({"type": "http.response.start", "status": exc.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def replay(message: Message, receive: Receive) -> Receive:
    """``receive`` that first hands ``message`` (a request already read) back, then defers to ``receive``."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return message
        return await receive()

    return replayed
