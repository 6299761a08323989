"""A question that asks for an amount or a date lifts the notes that give one, on the real stack."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from carnet.bootstrap.container import Container
from carnet.services.memories import recall
from carnet.services.memories.recall import Query, search
from carnet.services.memories.remember import NewMemory, remember
from carnet.services.scope import scope_for
from tests.integration.test_tamper import _flip_ciphertext_byte

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


def test_a_damaged_record_in_the_lifted_window_is_counted_once_and_the_rest_answer(container: Container) -> None:
    """The lift opens its window before the cut: a record that does not open there is left out and named
    once in ``unreadable``, and the others (the dated one first) are still found."""
    notes = [*OTHERS, "Il a un contrat habitation pour sa maison.", "Contrat habitation signé le 5 avril 2022."]
    remember(container.deps, tenant="t", subject_id="A3", actor="a",
             items=[NewMemory(text=t, occurred_at=AT) for t in notes])
    first = search(container.deps, tenant="t", subject_id="A3", query=Query(text="Quand a-t-il souscrit ?", k=10))
    damaged = next(r.memory.id for r in first if r.memory.text == notes[3])
    _flip_ciphertext_byte(container, scope_for(container.deps, "t", "A3"), damaged)
    found = search(container.deps, tenant="t", subject_id="A3", query=Query(text="Quand a-t-il souscrit ?", k=10))
    assert [u.id for u in found.unreadable] == [damaged]
    assert damaged not in {r.memory.id for r in found} and len(found) == len(notes) - 1
    assert found[0].memory.text == notes[4]



ABOUT_PREMIUMS = [
    "Sa cotisation auto est prélevée chaque mois.", "Il trouve sa cotisation habitation trop chère.",
    "La cotisation santé a augmenté cette année.", "Il a demandé un échéancier pour sa cotisation prévoyance.",
    "Cotisation obsèques réglée par son fils.", "Il conteste la hausse de cotisation de la mutuelle.",
    "Sa cotisation moto est suspendue l'hiver.", "Il paie la cotisation scolaire des enfants en septembre.",
    "Cotisations trimestrielles depuis son passage à la retraite.", "Il voudrait mensualiser ses cotisations.",
    "Rappel de cotisation impayée envoyé en mars.", "La cotisation emprunteur baisse avec le capital restant.",
]
PRICED = ["Frais de dossier de 35 € pour le prêt travaux.", "Pénalité de 50 € pour le retard de loyer.",
          "Duplicata de carte facturé 12 €.", "Franchise de 150 € sur le sinistre dégât des eaux."]


def test_asking_for_more_results_never_reorders_the_first_ones(
        container: Container, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lifts read a fixed window of candidates, never one as wide as ``k``: the first three of a
    search for twenty are the three a search for three gives (a client asking for more, or paging,
    sees the same order). The notes that give an amount rank past the window for these questions (a
    dozen closer notes about premiums); a lift of 1 makes any of them that a wider window reached
    jump to the top."""
    remember(container.deps, tenant="t", subject_id="A4", actor="a",
             items=[NewMemory(text=t, occurred_at=AT) for t in (*ABOUT_PREMIUMS, *PRICED, *OTHERS)])
    monkeypatch.setattr(recall, "ANSWER_LIFT", 1.0)
    for question in ("Combien coûte sa cotisation ?", "Combien coûte sa cotisation auto ?"):
        first = [r.memory.id for r in search(container.deps, tenant="t", subject_id="A4",
                                             query=Query(text=question, k=3))]
        for k in (5, 10, 15, 20):
            wider = search(container.deps, tenant="t", subject_id="A4", query=Query(text=question, k=k))
            assert [r.memory.id for r in wider][:3] == first, (question, k)
