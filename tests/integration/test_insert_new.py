"""``remember.insert_new`` (the bulk builder of ``carnet bench latency --text-pool``) writes the record
``remember`` creates for a note with no neighbour, and nothing else: no reconcile."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from carnet.bootstrap.container import Container
from carnet.ports import RecordFilter
from carnet.services.memories import recall
from carnet.services.memories.remember import NewMemory, insert_new, remember
from carnet.services.scope import scope_for

AT = datetime(2025, 3, 4, tzinfo=UTC)
FACT = NewMemory(text="Le client a un contrat habitation formule Confort depuis 2015, dossier SIN-48213.",
                 occurred_at=AT)


def _only(c: Container, subject: str) -> tuple[object, ...]:
    scope = scope_for(c.deps, "t", subject)
    records, _ = c.deps.index.scroll(scope, where=RecordFilter(), limit=10)
    assert len(records) == 1
    [m] = c.deps.index.reveal(scope, records, pseudo_text=True)
    history = c.deps.catalog.history(scope, m.id)
    assert [s.ref for s in m.sources] == [m.id]  # each names its own record
    sources = tuple(replace(s, ref="") for s in m.sources)
    return (m.text, m.pseudo_text, m.kind, m.valid_from, m.importance, m.retention, m.expires_at, m.special,
            m.profile, m.blind_index, m.status, sources, [(h.action, h.detail) for h in history])


def test_insert_new_writes_the_record_remember_creates(container: Container) -> None:
    [created] = remember(container.deps, tenant="t", subject_id="A", items=[FACT], actor="bench")
    assert created.action == "created"
    assert insert_new(container.deps, tenant="t", subject_id="B", items=[FACT, FACT], actor="bench") == 1
    assert _only(container, "A") == _only(container, "B")
    # the same vectors: the same question finds each subject's record with the same score
    query = recall.Query("Quelle formule pour le contrat habitation ?", k=3)
    a = recall.search(container.deps, tenant="t", subject_id="A", query=query)
    b = recall.search(container.deps, tenant="t", subject_id="B", query=query)
    assert len(a) == len(b) == 1 and a[0].score == pytest.approx(b[0].score, abs=1e-6)


def test_insert_new_does_not_reconcile(container: Container) -> None:
    moved = [NewMemory(text="Le membre habite à Lyon 7e.", occurred_at=AT),
             NewMemory(text="Le membre habite maintenant à Villeurbanne.", occurred_at=AT.replace(month=6))]
    outcomes = remember(container.deps, tenant="t", subject_id="A", items=moved, actor="bench")
    assert [o.action for o in outcomes] == ["created", "superseded"]
    assert insert_new(container.deps, tenant="t", subject_id="B", items=moved, actor="bench") == 2
    scope = scope_for(container.deps, "t", "B")
    assert container.deps.index.count(scope, where=RecordFilter()) == 2  # both live: nothing superseded
