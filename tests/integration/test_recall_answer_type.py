"""A question that asks for an amount or a date lifts the notes that give one, on the real stack."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from carnet.bootstrap.container import Container
from carnet.services.memories import recall
from carnet.services.memories.recall import Query, search
from carnet.services.memories.remember import NewMemory, remember

AT = datetime(2025, 9, 1, tzinfo=UTC)
OTHERS = ["Préfère être appelé le matin.", "Vit à Rennes avec son conjoint.", "A deux enfants scolarisés."]


def scores(container: Container, subject: str, question: str) -> dict[str, float]:
    found = search(container.deps, tenant="t", subject_id=subject, query=Query(text=question, k=10))
    return {r.memory.text: r.score for r in found}


def test_the_note_that_gives_the_amount_comes_first(container: Container, monkeypatch: pytest.MonkeyPatch) -> None:
    # By meaning and keywords the note without the amount is (just) the closer one.
    neighbour, carrier = "Sa cotisation auto est prélevée chaque mois.", "Cotisation auto de 45 € par mois."
    remember(container.deps, tenant="t", subject_id="A1", actor="a",
             items=[NewMemory(text=t, occurred_at=AT) for t in (*OTHERS, neighbour, carrier)])
    shipped = recall.ANSWER_LIFT
    lifted = scores(container, "A1", "Combien coûte sa cotisation auto ?")
    monkeypatch.setattr(recall, "ANSWER_LIFT", 0.0)  # what the lift overturns
    plain = scores(container, "A1", "Combien coûte sa cotisation auto ?")
    assert plain[neighbour] > plain[carrier]
    assert lifted[carrier] > lifted[neighbour]
    assert lifted[carrier] == pytest.approx(plain[carrier] + shipped)
    assert lifted[neighbour] == pytest.approx(plain[neighbour])


def test_a_date_question_lifts_the_dated_note_and_an_other_question_lifts_nothing(
        container: Container, monkeypatch: pytest.MonkeyPatch) -> None:
    neighbour, carrier = "Il a déménagé dans un appartement plus grand.", "Emménagement à Rennes le 12 juillet."
    remember(container.deps, tenant="t", subject_id="A2", actor="a",
             items=[NewMemory(text=t, occurred_at=AT) for t in (*OTHERS, neighbour, carrier)])
    shipped = recall.ANSWER_LIFT
    lifted = scores(container, "A2", "Quand a-t-il déménagé ?")
    other = scores(container, "A2", "Où a-t-il déménagé ?")
    monkeypatch.setattr(recall, "ANSWER_LIFT", 0.0)
    plain = scores(container, "A2", "Quand a-t-il déménagé ?")
    assert lifted[carrier] == pytest.approx(plain[carrier] + shipped)
    assert lifted[neighbour] == pytest.approx(plain[neighbour])
    assert other == pytest.approx(scores(container, "A2", "Où a-t-il déménagé ?"))  # no answer type, no lift
