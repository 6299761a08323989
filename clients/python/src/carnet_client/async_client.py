"""``AsyncCarnetClient``: the asyncio client, the same shell as ``CarnetClient`` over ``httpx.AsyncClient``."""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
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


def bind(build: Callable[P, Call[T]]) -> Callable[Concatenate[AsyncCarnetClient, P], Coroutine[Any, Any, T]]:
    """A coroutine method that builds the call with ``build`` and sends it."""

    @functools.wraps(build)
    async def method(self: AsyncCarnetClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self._run(build(*args, **kwargs))

    method.__signature__ = signature_with_self(build)  # type: ignore[attr-defined]
    return method


class AsyncCarnetClient:
    """The asynchronous twin of ``CarnetClient`` (same methods, awaited; same options). Runs on asyncio."""

    def __init__(self, base_url: str, api_key: str, *, timeout: float | httpx.Timeout = 30.0,
                 verify: Verify = True, cert: Cert | None = None, retry: Retry | None = None,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        options = http_options(base_url, api_key, timeout=timeout, verify=verify, cert=cert)
        self._http = httpx.AsyncClient(**options, transport=transport)
        self._retry = retry or NO_RETRY

    async def __aenter__(self) -> AsyncCarnetClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _send(self, call: Call[Any], *, stream: bool = False) -> httpx.Response:
        """Send ``call`` under the retry policy; a success, or raise its ``CarnetError``."""
        attempt = 0
        while True:
            try:
                response = await self._http.send(call.request(self._http), stream=stream)
            except httpx.TransportError as exc:
                raise from_transport(exc) from exc
            wait = None if response.status_code in call.ok else self._retry.wait(
                response, attempt, idempotent=call.idempotent)
            if wait is None:
                break
            await response.aclose()
            await asyncio.sleep(wait)
            attempt += 1
        if response.status_code not in call.ok:
            try:
                await response.aread()
            except httpx.TransportError as exc:
                raise from_transport(exc) from exc
            finally:
                await response.aclose()
            call.check(response)
        return response

    async def _run(self, call: Call[T]) -> T:
        return call.result(await self._send(call))

    @asynccontextmanager
    async def _stream(self, call: Call[Any]) -> AsyncIterator[httpx.Response]:
        response = await self._send(call, stream=True)
        try:
            yield response
        except httpx.TransportError as exc:
            raise from_transport(exc) from exc
        finally:
            await response.aclose()

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

    async def iter_memories(self, subject_id: str, *, kind: Kind | None = None, status: Status | None = None,
                            category: str | None = None, page_size: int | None = None) -> AsyncIterator[Memory]:
        """Every record of the listing, page after page (each page is one request)."""
        cursor: str | None = None
        while True:
            page = await self.list_memories(subject_id, kind=kind, status=status, category=category,
                                            limit=page_size, cursor=cursor)
            for memory in page.items:
                yield memory
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    async def export_to(self, subject_id: str, destination: str | Path | IO[bytes]) -> int:
        """Write the subject's export document to a path or a binary file as it streams in; returns
        the bytes written. The file writes are blocking (small chunks, a local file)."""
        if not isinstance(destination, str | Path):
            return await self._copy_export(subject_id, destination)
        path = Path(destination)
        try:
            with path.open("wb") as out:
                return await self._copy_export(subject_id, out)
        except BaseException:
            path.unlink(missing_ok=True)
            raise

    async def _copy_export(self, subject_id: str, out: IO[bytes]) -> int:
        written = 0
        async with self._stream(ep.export(subject_id)) as response:
            async for chunk in response.aiter_bytes():
                written += out.write(chunk)
        return written

    async def iter_audit(self, *, after_seq: int | None = None, limit: int | None = None) -> AsyncIterator[AuditEntry]:
        """The tenant's audit entries after ``after_seq`` as they stream in."""
        async with self._stream(ep.audit(after_seq=after_seq, limit=limit)) as response:
            async for line in response.aiter_lines():
                if line.strip():
                    yield AuditEntry.from_json(json.loads(line))
