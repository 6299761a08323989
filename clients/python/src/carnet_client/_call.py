"""One request and how to read its answer: everything the sync and async clients share.

Each endpoint is a function in ``_endpoints`` returning a ``Call``. A client only sends it (with its
retry policy) and hands the response to ``Call.result``; neither client knows any endpoint, so an
endpoint is written once and the two clients expose it with one line each (see ``bind`` there).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from urllib.parse import quote
from uuid import UUID

import httpx

from carnet_client.errors import UnexpectedResponse, from_response

T = TypeVar("T")
Params = Mapping[str, str | int | bool]


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    method: str
    path: str
    parse: Callable[[httpx.Response], T]
    params: Params | None = None
    json: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    ok: frozenset[int] = frozenset({200})
    idempotent: bool = True
    """Safe to send again after a 503: reads, and writes that carry an ``Idempotency-Key``."""

    def request(self, http: httpx.Client | httpx.AsyncClient) -> httpx.Request:
        return http.build_request(self.method, self.path, params=self.params, json=self.json, headers=self.headers)

    def check(self, response: httpx.Response) -> None:
        """Raise the ``CarnetError`` of an error answer (whose body has been read)."""
        if response.status_code not in self.ok:
            raise from_response(response)

    def result(self, response: httpx.Response) -> T:
        self.check(response)
        try:
            return self.parse(response)
        except (ValueError, KeyError, TypeError) as exc:
            # Neither the path (it holds a subject id) nor the body (personal data) goes in the message.
            raise UnexpectedResponse(f"unreadable answer to {self.method} ({type(exc).__name__})",
                                     status=response.status_code, code="unexpected_response") from exc


def segment(value: str | UUID, name: str) -> str:
    """A path segment, percent-encoded: an id can never reach another route (``..``, ``/``)."""
    text = str(value)
    if text in ("", ".", ".."):
        raise ValueError(f"{name} must not be empty, '.' or '..'")
    return quote(text, safe="")


def json_body(response: httpx.Response) -> Any:
    return response.json()


def nothing(_: httpx.Response) -> None:
    return None


def signature_with_self(build: Callable[..., Any]) -> inspect.Signature:
    """The signature of a client method made from ``build``: ``self`` first, no ``Call`` return
    (so ``help()`` and IDEs that read ``__signature__`` show the method as written)."""
    sig = inspect.signature(build)
    me = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
    return sig.replace(parameters=[me, *sig.parameters.values()], return_annotation=inspect.Signature.empty)
