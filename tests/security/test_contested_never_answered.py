"""``contested_by`` names newer records of the same subject, some of which the caller's role may not read (a
special category its key's policy hides). It is never in an answer (SECURITY.md): no REST read carries the key
or the hidden note's id, and the prompt names a contester only when it shows it."""

from __future__ import annotations

import json
from dataclasses import replace

from fastapi.testclient import TestClient

from carnet.bootstrap.container import Container
from carnet.entrypoints.http.app import create_app
from carnet.services.apikeys import create_key
from carnet.services.memories.remember import NewMemory, remember
from carnet.services.scope import scope_for
from tests.integration.test_contested import JANUARY, JUNE, Constant

TENANT, SUBJECT = "assur-nord", "ADH-0901"
OLDER = "Le membre est disponible le vendredi après-midi pour les rendez-vous."
HIDDEN = "Le membre ne peut plus venir le vendredi pendant le ramadan."  # religion: hidden from agent keys


def test_a_contester_the_caller_cannot_read_is_named_nowhere(container: Container) -> None:
    deps = replace(container.deps, supersession=Constant(0.7))  # every pair in the judge's uncertain band
    older, hidden = (remember(deps, tenant=TENANT, subject_id=SUBJECT, actor="test",
                              items=[NewMemory(text, occurred_at=at)])[0].memory
                     for text, at in ((OLDER, JANUARY), (HIDDEN, JUNE)))
    assert hidden.special == ("religion",)
    [stored] = container.deps.index.get(scope_for(container.deps, TENANT, SUBJECT), [older.id])
    assert stored.contested_by == (hidden.id,)  # the mark is on the stored record; no answer may show it
    key = create_key(container.deps.catalog, container.pepper, tenant=TENANT, roles=["agent"])[0]
    base = f"/api/v1/subjects/{SUBJECT}"
    with TestClient(create_app(container)) as client:
        client.headers["Authorization"] = f"Bearer {key}"
        answers = [client.get(f"{base}/memories/{older.id}"), client.get(f"{base}/memories"),
                   client.get(f"{base}/memories", params={"status": "any"}),
                   client.post(f"{base}/search", json={"query": "Quand voir le membre le vendredi ?", "k": 10}),
                   client.post("/api/v1/context/assemble",
                               json={"subject_id": SUBJECT, "query": "Quand voir le membre le vendredi ?"})]
    assert [a.status_code for a in answers] == [200] * len(answers)
    bodies = [json.dumps(a.json(), ensure_ascii=False) for a in answers]
    assert all(older.id in b for b in bodies)  # the readable record is there…
    assert not any(hidden.id in b or "contested_by" in b or "ramadan" in b for b in bodies)  # …nothing of the other
    assert "remplacé" not in answers[-1].json()["prompt"] and "replaced" not in answers[-1].json()["prompt"]
