"""An admitted request's answer, held back until its work is done, so its slot is free before the
client is written to (``carnet.entrypoints.http.admission``).

Writing to a client that does not read can wait (the server's write buffer fills, and each later
write waits for it to drain). The messages of an answer are kept here until its last body message;
then the slot is given back and only then is the answer written. An answer longer than ``limit``
(a streamed export or audit trail) is written as it comes once past it, and keeps its slot until its
end: its work is not done before. If the app fails before its last message, nothing kept is sent:
the error handlers outside answer instead.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.types import Message, Send

LIMIT = 1024 * 1024  # bytes of body kept back at most


class HeldAnswer:
    def __init__(self, send: Send, *, done: Callable[[], None], limit: int = LIMIT) -> None:
        self._send, self._done, self._limit = send, done, limit
        self._kept: list[Message] = []
        self._size = 0
        self._streaming = False

    async def __call__(self, message: Message) -> None:
        if self._streaming:
            await self._send(message)
            return
        self._kept.append(message)
        if message["type"] != "http.response.body":
            return
        if not message.get("more_body", False):  # the whole answer: the work is done
            self._done()
            await self.flush()
            return
        self._size += len(message.get("body", b""))
        if self._size > self._limit:
            self._streaming = True
            await self.flush()

    async def flush(self) -> None:
        kept, self._kept = self._kept, []
        for message in kept:
            await self._send(message)
