"""``CarnetClient``: the blocking client, a thin shell that sends the calls of ``_endpoints``."""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Concatenate, ParamSpec, TypeVar

import httpx

from carnet_client import _endpoints as ep
from carnet_client._call import Call, signature_with_self
from carnet_client._options import Cert, Verify, http_options
from carnet_client._retry import NO_RETRY, Retry
from carnet_client.errors import from_transport
from carnet_client.inputs import Kind, Status
from carnet_client.models import AuditEntry, Memory

P = ParamSpec("P")
T = TypeVar("T")


def bind(build: Callable[P, Call[T]]) -> Callable[Concatenate[CarnetClient, P], T]:
    """A method that builds the call with ``build`` and sends it: same name, parameters and docstring."""

    @functools.wraps(build)
    def method(self: CarnetClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._run(build(*args, **kwargs))

    method.__signature__ = signature_with_self(build)  # type: ignore[attr-defined]
    return method


class CarnetClient:
    """A Carnet API client for one API key. Thread-safe (one ``httpx.Client`` and its pool).

    ``retry`` is off by default: pass ``Retry()`` to wait out 429 and 503 answers a few times,
    within a bounded delay (see ``Retry``). ``verify`` takes a CA bundle path (a private CA) and
    ``cert`` a client certificate for mTLS. ``transport`` replaces the network (tests)."""

    def __init__(self, base_url: str, api_key: str, *, timeout: float | httpx.Timeout = 30.0,
                 verify: Verify = True, cert: Cert | None = None, retry: Retry | None = None,
                 transport: httpx.BaseTransport | None = None) -> None:
        options = http_options(base_url, api_key, timeout=timeout, verify=verify, cert=cert)
        self._http = httpx.Client(**options, transport=transport)
        self._retry = retry or NO_RETRY

    def __enter__(self) -> CarnetClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _send(self, call: Call[Any], *, stream: bool = False) -> httpx.Response:
        """Send ``call`` under the retry policy; a success, or raise its ``CarnetError``."""
        attempt = 0
        while True:
            try:
                response = self._http.send(call.request(self._http), stream=stream)
            except httpx.TransportError as exc:
                raise from_transport(exc) from exc
            wait = None if response.status_code in call.ok else self._retry.wait(
                response, attempt, idempotent=call.idempotent)
            if wait is None:
                break
            response.close()
            time.sleep(wait)
            attempt += 1
        if response.status_code not in call.ok:
            try:
                response.read()
            except httpx.TransportError as exc:
                raise from_transport(exc) from exc
            finally:
                response.close()
            call.check(response)
        return response

    def _run(self, call: Call[T]) -> T:
        return call.result(self._send(call))

    @contextmanager
    def _stream(self, call: Call[Any]) -> Iterator[httpx.Response]:
        response = self._send(call, stream=True)
        try:
            yield response
        except httpx.TransportError as exc:
            raise from_transport(exc) from exc
        finally:
            response.close()

    health = bind(ep.health)
    readiness = bind(ep.readiness)
    remember = bind(ep.remember)
    remember_batch = bind(ep.remember_batch)
    list_memories = bind(ep.list_memories)
    lookup = bind(ep.lookup)
    get_memory = bind(ep.get_memory)
    rectify = bind(ep.rectify)
    restore = bind(ep.restore)
    forget = bind(ep.forget)
    history = bind(ep.history)
    search = bind(ep.search)
    assemble = bind(ep.assemble)
    export = bind(ep.export)
    erase_subject = bind(ep.erase_subject)
    submit_messages = bind(ep.submit_messages)
    intake = bind(ep.intake)
    retention = bind(ep.retention)
    set_legal_hold = bind(ep.set_legal_hold)
    lift_legal_hold = bind(ep.lift_legal_hold)
    set_relationship_end = bind(ep.set_relationship_end)
    maintain = bind(ep.maintain)
    audit = bind(ep.audit)
    verify_audit = bind(ep.verify_audit)
    list_api_keys = bind(ep.list_api_keys)
    create_api_key = bind(ep.create_api_key)
    revoke_api_key = bind(ep.revoke_api_key)
    list_procedures = bind(ep.list_procedures)
    propose_procedure = bind(ep.propose_procedure)
    get_procedure = bind(ep.get_procedure)
    approve_procedure = bind(ep.approve_procedure)
    reject_procedure = bind(ep.reject_procedure)
    retire_procedure = bind(ep.retire_procedure)

    def iter_memories(self, subject_id: str, *, kind: Kind | None = None, status: Status | None = None,
                      category: str | None = None, page_size: int | None = None) -> Iterator[Memory]:
        """Every record of the listing, page after page (each page is one request)."""
        cursor: str | None = None
        while True:
            page = self.list_memories(subject_id, kind=kind, status=status, category=category, limit=page_size,
                                      cursor=cursor)
            yield from page.items
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def export_to(self, subject_id: str, destination: str | Path | IO[bytes]) -> int:
        """Write the subject's export document (JSON) to a path or a binary file as it streams in,
        never holding it whole; returns the bytes written. A path left half written is removed."""
        if not isinstance(destination, str | Path):
            return self._copy_export(subject_id, destination)
        path = Path(destination)
        try:
            with path.open("wb") as out:
                return self._copy_export(subject_id, out)
        except BaseException:
            path.unlink(missing_ok=True)
            raise

    def _copy_export(self, subject_id: str, out: IO[bytes]) -> int:
        written = 0
        with self._stream(ep.export(subject_id)) as response:
            for chunk in response.iter_bytes():
                written += out.write(chunk)
        return written

    def iter_audit(self, *, after_seq: int | None = None, limit: int | None = None) -> Iterator[AuditEntry]:
        """The tenant's audit entries after ``after_seq`` as they stream in (for a SIEM pulling)."""
        with self._stream(ep.audit(after_seq=after_seq, limit=limit)) as response:
            for line in response.iter_lines():
                if line.strip():
                    yield AuditEntry.from_json(json.loads(line))
