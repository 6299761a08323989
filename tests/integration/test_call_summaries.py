"""A call's summary that restates a decision a newer note makes untrue is closed with it, on the real
stack (``reconcile.summaries``): found by the id its intake gave it, never by a search. Sentences
written for this test."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from carnet.bootstrap.container import Container
from carnet.domain.records import Kind, Source, Status
from carnet.services.deps import Deps
from carnet.services.memories.reads import list_memories
from carnet.services.memories.recall import Query, search
from carnet.services.memories.remember import NewMemory, keyed_id, remember
from carnet.services.scope import scope_for
from tests.integration.test_tamper import _flip_ciphertext_byte
from tests.support.judges import Pairs

AT = datetime(2026, 2, 20, tzinfo=UTC)
DECISION = "Le conseiller met à jour : arrêt prolongé jusqu'au 31 mars 2026."
OTHER = "Le conseiller envoie le formulaire de prévoyance par e-mail."
LATER = "Nouvelle prolongation : arrêt jusqu'au 30 avril 2026."


def _call(container: Container, subject: str, intake: str, facts: list[str], summary: str) -> None:
    source = (Source("intake", intake, "call-1"),)
    items = [NewMemory(text=t, occurred_at=AT, idempotency_key=f"intake:{intake}:{n}", sources=source)
             for n, t in enumerate(facts)]
    items.append(NewMemory(text=summary, kind=Kind.EPISODE, occurred_at=AT, idempotency_key=f"intake:{intake}:episode",
                           sources=source))
    remember(_deps(container), tenant="t", subject_id=subject, actor="a", items=items)


def _deps(container: Container) -> Deps:
    """The stack's dependencies with the story's judge (``JUDGE``): these tests are about the summaries
    around a closure, not about the learned weights."""
    return replace(container.deps, supersession=JUDGE)


JUDGE = Pairs((DECISION, LATER), (DECISION, "Arrêt prolongé jusqu'au 30 avril 2026."),
              ("La cotisation auto est de 54 euros par mois.", "La cotisation auto passe à 61 euros par mois."))


def _statuses(container: Container, subject: str) -> dict[str, Status]:
    page = list_memories(container.deps, tenant="t", subject_id=subject, status=None)
    return {m.text: m.status for m in page.items}


def test_the_summary_restating_a_superseded_decision_is_closed(container: Container) -> None:
    summary = f"Appel du 20 février 2026 : arrêt de travail ; {DECISION[:1].lower()}{DECISION[1:-1]} ; " \
              f"{OTHER[:1].lower()}{OTHER[1:-1]}."
    _call(container, "S1", "I1", [DECISION, OTHER], summary)
    remember(_deps(container), tenant="t", subject_id="S1", actor="a",
             items=[NewMemory(text=LATER, occurred_at=AT + timedelta(days=35))])  # fmt: skip
    statuses = _statuses(container, "S1")
    assert statuses[DECISION] is Status.SUPERSEDED
    assert statuses[summary] is Status.SUPERSEDED
    assert statuses[OTHER] is Status.ACTIVE  # the summary's other decision is a fact of its own


def test_a_summary_in_other_words_stays(container: Container) -> None:
    summary = "Appel du 20 février 2026 : l'arrêt de travail a été mis à jour."
    _call(container, "S2", "I2", [DECISION], summary)
    remember(_deps(container), tenant="t", subject_id="S2", actor="a",
             items=[NewMemory(text=LATER, occurred_at=AT + timedelta(days=35))])  # fmt: skip
    statuses = _statuses(container, "S2")
    assert statuses[DECISION] is Status.SUPERSEDED
    assert statuses[summary] is Status.ACTIVE


def test_any_closed_fact_of_the_call_restated_closes_its_summary(container: Container) -> None:
    """Two facts of one call, the second closed later: the summary restates the second only."""
    premium = "La cotisation auto est de 54 euros par mois."
    summary = "Appel du 20 février 2026 : cotisation ; la cotisation auto est de 54 euros par mois."
    _call(container, "S3", "I3", [DECISION, premium], summary)
    remember(_deps(container), tenant="t", subject_id="S3", actor="a",
             items=[NewMemory(text="La cotisation auto passe à 61 euros par mois.",
                              occurred_at=AT + timedelta(days=35))])  # fmt: skip
    statuses = _statuses(container, "S3")
    assert statuses[DECISION] is Status.ACTIVE and statuses[premium] is Status.SUPERSEDED
    assert statuses[summary] is Status.SUPERSEDED


def test_a_damaged_summary_is_left_as_it_is_and_the_write_goes_through(container: Container) -> None:
    """The summary does not open: the decision is still closed by the newer note, nothing fails."""
    summary = f"Appel du 20 février 2026 : arrêt de travail ; {DECISION[:1].lower()}{DECISION[1:-1]}."
    _call(container, "S4", "I4", [DECISION], summary)
    scope = scope_for(container.deps, "t", "S4")
    _flip_ciphertext_byte(container, scope, keyed_id(container.deps.hasher, scope, "intake:I4:episode"))
    outcomes = remember(_deps(container), tenant="t", subject_id="S4", actor="a",
                        items=[NewMemory(text=LATER, occurred_at=AT + timedelta(days=35))])  # fmt: skip
    assert outcomes[0].action == "superseded"
    page = list_memories(container.deps, tenant="t", subject_id="S4", status=None)
    assert {m.text: m.status for m in page.items}[DECISION] is Status.SUPERSEDED
    assert len(page.unreadable) == 1  # the summary, counted as unreadable, not closed nor lost


def test_a_summary_restating_the_answers_above_it_gives_its_place(container: Container) -> None:
    """Searched over facts and summaries, a summary saying only what the facts found say is moved
    behind the next record: the advisor sees one more answer, not the same one twice."""
    opening = "Le conseiller ouvre un dossier d'indemnités journalières, le PRV-2031-0107."
    payment = "Le premier versement d'indemnités journalières est parti : 960 euros (dossier PRV-2031-0107)."
    summary = "Appel du 20 février 2026 : le conseiller ouvre un dossier d'indemnités journalières, le PRV-2031-0107."
    _call(container, "S5", "I5", [opening], summary)
    remember(_deps(container), tenant="t", subject_id="S5", actor="a",
             items=[NewMemory(text=payment, occurred_at=AT + timedelta(days=30))])
    question = "Le dossier PRV-2031-0107 a-t-il donné lieu à un versement ?"

    def found(k: int) -> list[str]:
        return [r.memory.text for r in search(container.deps, tenant="t", subject_id="S5", query=Query(question, k=k))]

    assert set(found(2)) == {opening, payment}
    everything = found(5)
    assert everything[-1] == summary  # still found, after the records it restates
