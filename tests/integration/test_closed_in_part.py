"""A note of several parts made untrue in part (``reconcile.remainder``), on the real stack: the whole
note is closed, and the parts still true become a record of their own, with the closed note's date and
sources, findable, exported and erased with the subject. Sentences written for this test."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from carnet.bootstrap.container import Container
from carnet.domain.records import Memory, Source, Status
from carnet.errors import SubjectNotFound
from carnet.services.memories.reads import list_memories
from carnet.services.memories.recall import Query, search
from carnet.services.memories.remember import NewMemory, remember
from carnet.services.rights.erase import erase_subject
from carnet.services.rights.export import Exported, NotExported, export_subject
from carnet.services.scope import scope_for
from tests.integration.test_tamper import _flip_ciphertext_byte

AT = datetime(2025, 3, 18, tzinfo=UTC)
TURN = "La cotisation habitation est de 32 euros par mois ; le conseiller ajoute la garantie piscine au contrat."
REST = "le conseiller ajoute la garantie piscine au contrat."
LATER = "La cotisation habitation passe à 35 euros par mois."
SOURCE = (Source("intake", "I-7", "call-7"),)


def _story(container: Container, subject: str) -> list[str]:
    remember(container.deps, tenant="t", subject_id=subject, actor="a",
             items=[NewMemory(TURN, occurred_at=AT, sources=SOURCE)])
    out = remember(container.deps, tenant="t", subject_id=subject, actor="a",
                   items=[NewMemory(LATER, occurred_at=AT + timedelta(days=90))])
    return list(out[0].superseded)


def _by_text(container: Container, subject: str) -> dict[str, Memory]:
    page = list_memories(container.deps, tenant="t", subject_id=subject, status=None)
    return {m.text: m for m in page.items}


def test_the_parts_still_true_are_kept_as_a_record_of_their_own(container: Container) -> None:
    closed = _story(container, "P-1")
    records = _by_text(container, "P-1")
    old, rest = records[TURN], records[REST]
    assert closed == [old.id] and old.status is Status.SUPERSEDED
    assert rest.status is Status.ACTIVE
    assert rest.valid_from == AT and rest.sources == SOURCE
    found = search(container.deps, tenant="t", subject_id="P-1", query=Query("Garantie piscine ?", k=3))
    assert found and found[0].memory.text == REST
    premium = search(container.deps, tenant="t", subject_id="P-1", query=Query("Combien paie-t-il ?", k=5))
    assert all("32 euros" not in r.memory.text for r in premium)  # the closed value stays hidden


def test_a_replay_of_the_closing_write_adds_nothing(container: Container) -> None:
    _story(container, "P-2")
    before = _by_text(container, "P-2")
    remember(container.deps, tenant="t", subject_id="P-2", actor="a",
             items=[NewMemory(LATER, occurred_at=AT + timedelta(days=90))])
    assert _by_text(container, "P-2").keys() == before.keys()


def test_the_remainder_is_exported_and_erased_with_the_subject(container: Container) -> None:
    _story(container, "P-3")
    exported = {r.memory.text: r for r in export_subject(container.deps, tenant="t", subject_id="P-3").records
                if isinstance(r, Exported)}
    assert exported.keys() == {TURN, REST, LATER}
    assert [h.action for h in exported[REST].history] == ["created"]
    assert erase_subject(container.deps, tenant="t", subject_id="P-3").complete
    with pytest.raises(SubjectNotFound):
        export_subject(container.deps, tenant="t", subject_id="P-3")


def test_a_damaged_neighbour_leaves_the_closing_and_the_remainder_working(container: Container) -> None:
    """Another record of the subject does not open: the turn is still closed in part, its rest written,
    and export names the damaged record as unreadable beside the others."""
    other = remember(container.deps, tenant="t", subject_id="P-4", actor="a",
                     items=[NewMemory("La cotisation habitation comprend la garantie vol.", occurred_at=AT)])
    scope = scope_for(container.deps, "t", "P-4")
    _flip_ciphertext_byte(container, scope, other[0].memory.id)
    _story(container, "P-4")
    records = export_subject(container.deps, tenant="t", subject_id="P-4").records
    exported = {r.memory.text: r.memory.status for r in records if isinstance(r, Exported)}
    assert exported[REST] is Status.ACTIVE and exported[TURN] is Status.SUPERSEDED
    unreadable = [r for r in export_subject(container.deps, tenant="t", subject_id="P-4").records
                  if isinstance(r, NotExported)]
    assert [r.id for r in unreadable] == [other[0].memory.id]
