"""A record the judge was unsure about carries, over REST and in the SDK's ``Memory``, the newer note that may
have replaced it (``contested_by``), so a developer who renders the records without the ``prompt`` still sees
it; a record nobody contests carries an empty list."""

from __future__ import annotations

from dataclasses import replace

import httpx
import pytest
from carnet_client import CarnetClient

from carnet.bootstrap.container import Container
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.server import running
from carnet.services.apikeys import create_key
from carnet.services.memories.remember import NewMemory, remember
from tests.integration.test_contested import GRENOBLE, JANUARY, JUNE, LYON, Constant

TENANT, SUBJECT = "assur-nord", "ADH-0042"


@pytest.mark.parametrize(("p", "contested"), [(0.7, True), (0.1, False)])
def test_the_older_record_names_the_note_that_contests_it(container: Container, p: float, contested: bool) -> None:
    deps = replace(container.deps, supersession=Constant(p))  # 0.7: in the judge's uncertain band; 0.1: below
    older, newer = (remember(deps, tenant=TENANT, subject_id=SUBJECT, actor="test",
                             items=[NewMemory(text, occurred_at=at)])[0].memory.id
                    for text, at in ((LYON, JANUARY), (GRENOBLE, JUNE)))
    expected = [newer] if contested else []
    key, _ = create_key(container.deps.catalog, container.pepper, tenant=TENANT, roles=["agent"])
    with running(create_app(container)) as base, CarnetClient(base, key, timeout=30) as carnet:
        assert carnet.get_memory(SUBJECT, older).contested_by == tuple(expected)
        assert carnet.get_memory(SUBJECT, newer).contested_by == ()
        shown = carnet.assemble(SUBJECT, "Où habite le membre ?")
        assert {m.memory.id: list(m.memory.contested_by) for m in shown.memories} == {older: expected, newer: []}
        raw = httpx.get(f"{base}/api/v1/subjects/{SUBJECT}/memories/{older}",
                        headers={"Authorization": f"Bearer {key}"}, timeout=30)
        assert raw.status_code == 200 and raw.json()["contested_by"] == expected  # the JSON key itself
