"""A file named by its kind only ("le dossier grêle est clos") reaches the status of the one file of that
kind on the real stack: reconcile meets the notes naming that file's reference, however far their
wording, through the note that names both (``neighbours.nearest``). Sentences written for this test; the
judge is the story's (``tests/support/judges.Pairs``): what is tested is that the pair reaches it."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from carnet.bootstrap.container import Container
from carnet.domain.records import Status
from carnet.services.memories import neighbours
from carnet.services.memories.reads import list_memories
from carnet.services.memories.remember import NewMemory, remember
from tests.support.judges import Pairs

AT = datetime(2025, 7, 11, tzinfo=UTC)
OPENED = "Le conseiller déclare le sinistre SIN-2031-0001, grêle sur la voiture garée devant la maison."
EXPERT = "Rendez-vous fixé le 22 juillet avec le cabinet d'expertise Alpes Experts (dossier SIN-2031-0001)."
CLOSED = "Le dossier grêle est clos : la voiture est réparée et le garage est payé."


def _statuses(container: Container, subject: str) -> dict[str, Status]:
    page = list_memories(container.deps, tenant="t", subject_id=subject, status=None)
    return {m.text: m.status for m in page.items}


@pytest.mark.parametrize("nearest", [1, neighbours.RECONCILE_CANDIDATES])
def test_the_kind_leads_to_the_file_and_its_status_is_replaced(container: Container, monkeypatch: pytest.MonkeyPatch,
                                                               nearest: int) -> None:
    """With one nearest neighbour only, the expert's visit is met through the opening's reference."""
    subject = f"hail-{nearest}"
    judge = Pairs((EXPERT, CLOSED))
    deps = replace(container.deps, supersession=judge)
    for n, text in enumerate([OPENED, EXPERT]):
        remember(deps, tenant="t", subject_id=subject, actor="a",
                 items=[NewMemory(text=text, occurred_at=AT + timedelta(days=n))])  # fmt: skip
    monkeypatch.setattr(neighbours, "RECONCILE_CANDIDATES", nearest)
    remember(deps, tenant="t", subject_id=subject, actor="a",
             items=[NewMemory(text=CLOSED, occurred_at=AT + timedelta(days=40))])  # fmt: skip
    statuses = _statuses(container, subject)
    assert (EXPERT, CLOSED) in judge.asked  # the expert's visit reached the judge through the reference
    assert statuses[EXPERT] is Status.SUPERSEDED
    assert statuses[OPENED] is Status.ACTIVE and statuses[CLOSED] is Status.ACTIVE
