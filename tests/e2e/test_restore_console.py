"""The console's "Rétablir" (issue 47, item 4), without a browser: a superseded record's card carries
the form for a DPO and a supervisor, not for an agent; posting it (with the session's CSRF token)
restores the record and shows the timeline again, and the reason is nowhere on the page."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from carnet.bootstrap.container import Container
from carnet.entrypoints.http.app import create_app
from carnet.services.apikeys import create_key
from carnet.services.memories import reads
from tests.e2e.test_mcp import SUBJECT, TENANT
from tests.e2e.test_restore_mcp import _closed
from tests.security.test_console_forms import _login

_RESTORE = re.compile(r'action="/console/(member|dpo)/restore"')


@pytest.fixture
def console(container: Container) -> Iterator[TestClient]:
    with TestClient(create_app(container), base_url="https://testserver") as c:  # Secure cookies need https
        yield c


def _key(c: Container, *roles: str) -> str:
    return create_key(c.deps.catalog, c.pepper, tenant=TENANT, roles=list(roles))[0]


def test_a_dpo_restores_from_the_member_page(container: Container, console: TestClient) -> None:
    old_id, _ = _closed(container)
    csrf = _login(console, _key(container, "dpo"))
    page = console.post("/console/dpo", data={"csrf": csrf, "subject_id": SUBJECT})
    assert page.status_code == 200 and _RESTORE.findall(page.text) == ["dpo"]  # one card is superseded
    done = console.post("/console/dpo/restore", data={"csrf": csrf, "subject_id": SUBJECT, "memory_id": old_id,
                                                      "reason": "Sa fille habite Villeurbanne, pas elle."})
    assert done.status_code == 200 and "rétabli" in done.text and "Sa fille" not in done.text
    assert not _RESTORE.findall(done.text)  # nothing superseded is left
    memory = reads.get_memory(container.deps, tenant=TENANT, subject_id=SUBJECT, memory_id=old_id)
    assert memory.status.value == "active"
    again = console.post("/console/dpo/restore", data={"csrf": csrf, "subject_id": SUBJECT, "memory_id": old_id})
    assert again.status_code == 409


def test_the_timeline_offers_it_to_a_supervisor_not_to_an_agent(container: Container, console: TestClient) -> None:
    old_id, _ = _closed(container)
    csrf = _login(console, _key(container, "agent"))
    page = console.post("/console/member", data={"csrf": csrf, "subject_id": SUBJECT})
    assert page.status_code == 200 and not _RESTORE.findall(page.text)
    refused = console.post("/console/member/restore", data={"csrf": csrf, "subject_id": SUBJECT, "memory_id": old_id})
    assert refused.status_code == 403

    console.cookies.clear()
    csrf = _login(console, _key(container, "agent", "supervisor"))
    page = console.post("/console/member", data={"csrf": csrf, "subject_id": SUBJECT})
    assert _RESTORE.findall(page.text) == ["member"]
    done = console.post("/console/member/restore", data={"csrf": csrf, "subject_id": SUBJECT, "memory_id": old_id})
    assert done.status_code == 200 and not _RESTORE.findall(done.text)
