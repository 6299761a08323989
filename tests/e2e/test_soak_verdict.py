"""The soak's verdict fails when an invariant breaks (issue 50, item 5): the soak's own assistants and
final checks (``carnet.bench.soak.run.soak``) against one real server on the embedded store, over real
HTTP, no fault and no time (the busiest machine: only the work owed at the end is done), twice: as it is
(the verdict is empty: nothing lacks), then with erasure broken on purpose (the server answers a complete
receipt and erases nothing), which the verdict names.

This harness has no OpenBao: the check of data keys left in its KV store finds none here (there is none
to find); tests/e2e/test_soak.py runs the same code on the production topology, faults included."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import hvac.exceptions
import pytest
from fastapi import FastAPI
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from carnet.bench.soak import run as soak_run
from carnet.bench.soak import verdict
from carnet.bootstrap.container import Container
from carnet.bootstrap.wiring import start_workers
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.server import running
from carnet.services.apikeys import create_key
from tests.support.extractors import ScriptedExtractor

pytestmark = pytest.mark.slow
# No time at all: as if the machine were so busy that no request fit in the run. The assistants then do, as
# they stop, each kind of action they have not done: the verdict never fails for lack of work.
SECONDS = 0.0
_SUBJECT = re.compile(r"^/api/v1/subjects/[^/]+$")


def _no_keys(path: str, mount_point: str) -> dict[str, Any]:
    raise hvac.exceptions.InvalidPath(f"no {mount_point}/{path} here")


@dataclass
class OneServer:
    """What ``soak`` reads of a topology: the keys, the API's address, no other part."""

    keys: dict[str, str]
    bases: list[str]
    api_parts: list[Any] = field(default_factory=list)
    worker_parts: list[Any] = field(default_factory=list)
    bao: Any = field(default_factory=lambda: SimpleNamespace(root=lambda: SimpleNamespace(
        secrets=SimpleNamespace(kv=SimpleNamespace(v2=SimpleNamespace(list_secrets=_no_keys))))))


class ErasureThatErasesNothing:
    """The broken invariant: ``DELETE /api/v1/subjects/{id}`` answers a complete receipt, and nothing is
    erased (a subject erased and still there)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "DELETE" and _SUBJECT.match(scope["path"]):
            receipt = {"subject_hash": "0" * 64, "complete": True, "residue": [], "data_key_destroyed": True}
            await JSONResponse(receipt)(scope, receive, send)
            return
        await self.app(scope, receive, send)


@pytest.fixture
def served(container: Container) -> Iterator[tuple[FastAPI, OneServer]]:
    start_workers(container, extractor=ScriptedExtractor())  # the calls' intakes are done, as by a worker
    keys = {name: create_key(container.deps.catalog, container.pepper, tenant=tenant, roles=[role])[0]
            for name, (tenant, role) in soak_run.KEYS.items()}
    app = create_app(container)
    yield app, OneServer(keys=keys, bases=[])


def _soak(app: FastAPI, topology: OneServer) -> dict[str, Any]:
    with running(app) as base:
        topology.bases = [base]
        return soak_run.soak(topology, seconds=SECONDS, faults=(), assistants=1)  # type: ignore[arg-type]


def test_the_verdict_passes_a_server_that_keeps_its_invariants(served: tuple[FastAPI, OneServer]) -> None:
    result = _soak(*served)
    assert verdict.failures(result, ()) == [], result
    assert result["erasures"]["erased_subjects"] > 0 and result["intakes"]["accepted"] > 0  # it checked something


def test_the_verdict_names_an_erasure_that_erased_nothing(served: tuple[FastAPI, OneServer]) -> None:
    app, topology = served
    app.add_middleware(ErasureThatErasesNothing)  # outermost: before the key is even checked
    failed = verdict.failures(_soak(app, topology), ())
    assert "erased subjects found again" in " ".join(failed), failed
    assert any(f.startswith("invariant broken: erased_reappeared") for f in failed), failed
