"""The console's timeline names, on an active record the judge was unsure about, the newer note that may
have replaced it (``contested_by``), linked to its card; a record nobody contests carries no such line."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

import pytest
from fastapi.testclient import TestClient

from carnet.bootstrap.container import Container
from carnet.entrypoints.http.app import create_app
from carnet.services.apikeys import create_key
from carnet.services.memories.remember import NewMemory, remember
from tests.e2e.test_mcp import SUBJECT, TENANT
from tests.integration.test_contested import GRENOBLE, JANUARY, JUNE, LYON, Constant
from tests.security.test_console_forms import _login

_CONTESTED = re.compile(r'Peut-être remplacé par la note plus récente[^<]*<a href="#m-([0-9a-f-]+)">')


@pytest.fixture
def console(container: Container) -> Iterator[TestClient]:
    with TestClient(create_app(container), base_url="https://testserver") as c:  # Secure cookies need https
        yield c


@pytest.mark.parametrize(("p", "shown"), [(0.7, True), (0.1, False)])
def test_the_member_page_links_a_contested_record_to_the_newer_note(
    container: Container, console: TestClient, p: float, shown: bool
) -> None:
    deps = replace(container.deps, supersession=Constant(p))  # 0.7: in the judge's uncertain band; 0.1: below
    _, newer = (remember(deps, tenant=TENANT, subject_id=SUBJECT, actor="test",
                         items=[NewMemory(text, occurred_at=at)])[0].memory.id
                for text, at in ((LYON, JANUARY), (GRENOBLE, JUNE)))
    key = create_key(container.deps.catalog, container.pepper, tenant=TENANT, roles=["agent"])[0]
    page = console.post("/console/member", data={"csrf": _login(console, key), "subject_id": SUBJECT})
    assert page.status_code == 200
    assert _CONTESTED.findall(page.text) == ([newer] if shown else [])
