"""The HTTP/1.1 protocol uvicorn runs for Carnet: uvicorn's httptools protocol with two things of ours.

- **A request head is bounded** (``CARNET_API__MAX_HEADER_BYTES`` for the target and headers together,
  ``CARNET_API__MAX_HEADERS`` for their count): beyond it, ``431 headers_too_large`` and the connection
  closed. httptools (llhttp) sets no limit of its own, so a 1 MB header or 500 headers were taken in
  whole (issue 46, finding 8). A head still incomplete after that many bytes (one header sent without
  end) is refused as it arrives, so what the server buffers of a head is bounded too (by the limit plus
  one read of the socket).
- **A request the parser refuses gets JSON**: ``400 malformed_request`` in the REST shape
  (``{"error": {"code", "message"}}``) instead of uvicorn's plain text, and the connection closed.

These answers are written by the protocol, before any ASGI app runs: no middleware sees them and the
access log does not count them (uvicorn logs a warning without the request's content).
"""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from carnet.entrypoints.presenters.errors import error_body
from carnet.errors import CarnetError, HeadersTooLarge, MalformedRequest
from carnet.settings.api import ApiSettings


class _HeadTooLarge(Exception):
    """Raised inside a parser callback: httptools stops parsing and reports a parser error."""


class BoundedHttpProtocol(HttpToolsProtocol):
    """uvicorn's protocol with a bounded request head and JSON refusals (module doc)."""

    max_header_bytes = 32 * 1024
    max_headers = 100

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._in_head = True  # until a request's headers are complete, and again after its end
        self._head_bytes = 0  # bytes received while in a head (an upper bound: a read may hold more)
        self._head_size = 0  # the parsed target and headers of the current request
        self._head_count = 0
        self._too_large = False

    def data_received(self, data: bytes) -> None:
        if self._in_head:
            self._head_bytes += len(data)
        super().data_received(data)
        if self._in_head and self._head_bytes > self.max_header_bytes and not self.transport.is_closing():
            self._too_large = True
            self.send_400_response("")

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._head_size = self._head_count = 0

    def on_url(self, url: bytes) -> None:
        self._grow(len(url), headers=0)
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._grow(len(name) + len(value), headers=1)
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._in_head, self._head_bytes = False, 0
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._in_head, self._head_bytes = True, 0

    def _grow(self, size: int, *, headers: int) -> None:
        self._head_size += size
        self._head_count += headers
        if self._head_size > self.max_header_bytes or self._head_count > self.max_headers:
            self._too_large = True
            raise _HeadTooLarge

    def send_400_response(self, msg: str) -> None:
        """Every refusal of the parser (uvicorn calls this one), as JSON; the connection is closed."""
        exc: CarnetError = (HeadersTooLarge("the request's headers are too many or too long") if self._too_large
                            else MalformedRequest("the request is not well-formed HTTP/1.1"))
        self.transport.write(refusal(exc))
        self.transport.close()


def refusal(exc: CarnetError) -> bytes:
    """A whole HTTP/1.1 answer carrying ``exc`` in the REST shape, closing the connection."""
    body = json.dumps(error_body(exc.code, exc.message)).encode()
    head = (f"HTTP/1.1 {exc.status} {HTTPStatus(exc.status).phrase}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n")
    return head.encode("ascii") + body


def bounded_protocol(api: ApiSettings) -> type[BoundedHttpProtocol]:
    """The protocol class with ``api``'s limits (uvicorn builds one instance per connection)."""
    return type("CarnetHttpProtocol", (BoundedHttpProtocol,),
                {"max_header_bytes": api.max_header_bytes, "max_headers": api.max_headers})


def uvicorn_options(api: ApiSettings) -> dict[str, Any]:
    """What ``uvicorn.run``/``uvicorn.Config`` take from the settings: the bounded protocol, and no
    WebSocket upgrade (Carnet serves none; an ``Upgrade`` header is then ignored)."""
    return {"http": bounded_protocol(api), "ws": "none"}
