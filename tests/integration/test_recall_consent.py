"""A question asked before an offer ("Puis-je lui proposer notre assurance habitation ?") brings the
member's consent or opposition to marketing first, on the real stack: found by the profile flag, not by
meaning, current records only, the newest first, and a damaged one named without stopping the others."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from carnet.bootstrap.container import Container
from carnet.services.memories import recall
from carnet.services.memories.recall import Query, search
from carnet.services.memories.remember import NewMemory, remember
from carnet.services.scope import scope_for
from tests.integration.test_tamper import _flip_ciphertext_byte

AT = datetime(2025, 3, 1, tzinfo=UTC)
OFFER = "Puis-je lui proposer notre nouvelle assurance habitation ?"
OPPOSED = "Il refuse toute sollicitation commerciale."
OTHERS = [
    "Le membre a une assurance habitation pour sa maison de Rennes.",
    "Le membre a un contrat auto formule tous risques.",
    "Sinistre bris de glace ouvert en janvier.",
    "Le membre habite à Rennes depuis 2019.",
]


def _store(c: Container, subject: str, texts: list[str], at: datetime = AT) -> list[str]:
    out = remember(c.deps, tenant="t", subject_id=subject, actor="a",
                   items=[NewMemory(text=t, occurred_at=at) for t in texts])
    return [o.memory.id for o in out]


def _texts(c: Container, subject: str, question: str, k: int = 3) -> list[str]:
    return [r.memory.text for r in search(c.deps, tenant="t", subject_id=subject, query=Query(text=question, k=k))]


def test_the_consent_record_answers_a_question_asked_before_an_offer(
        container: Container, monkeypatch: pytest.MonkeyPatch) -> None:
    _store(container, "C1", [*OTHERS, OPPOSED])
    first = _texts(container, "C1", OFFER)
    assert first[0] == OPPOSED
    assert _texts(container, "C1", "Quel est son contrat auto ?", k=1) != [OPPOSED]  # not an offer: ranked as usual
    monkeypatch.setattr(recall, "asks_consent", lambda question: False)
    assert _texts(container, "C1", OFFER, k=1) != [OPPOSED]  # by meaning the home insurance note is closer


def test_the_newest_consent_statements_come_first_and_superseded_ones_never(container: Container) -> None:
    old, = _store(container, "C2", ["Il accepte les offres commerciales par e-mail."], at=AT)
    _store(container, "C2", OTHERS, at=AT + timedelta(days=10))
    newer, = _store(container, "C2", ["Le membre ne veut plus être démarché par téléphone."],
                    at=AT + timedelta(days=40))
    newest, = _store(container, "C2", ["Opposition à tout démarchage commercial, par téléphone et par courrier."],
                     at=AT + timedelta(days=60))
    found = search(container.deps, tenant="t", subject_id="C2", query=Query(text=OFFER, k=5))
    assert [r.memory.id for r in found][: recall.CONSENT_FIRST] == [newest, newer]
    scope = scope_for(container.deps, "t", "C2")
    for mid in (newest, newer):
        (m,) = container.deps.index.get(scope, [mid])
        container.deps.index.replace_payload(scope, [m.superseded(by=old, at=AT + timedelta(days=70))])
    found = search(container.deps, tenant="t", subject_id="C2", query=Query(text=OFFER, k=5))
    assert found[0].memory.id == old
    assert not {newest, newer} & {r.memory.id for r in found}


def test_without_a_consent_record_an_offer_question_is_ranked_as_usual(container: Container) -> None:
    _store(container, "C3", OTHERS)
    assert sorted(_texts(container, "C3", OFFER, k=10)) == sorted(OTHERS)


def test_a_damaged_consent_record_is_named_once_and_the_rest_answer(container: Container) -> None:
    ids = _store(container, "C4", [*OTHERS, OPPOSED])
    _flip_ciphertext_byte(container, scope_for(container.deps, "t", "C4"), ids[-1])
    found = search(container.deps, tenant="t", subject_id="C4", query=Query(text=OFFER, k=10))
    assert [u.id for u in found.unreadable] == [ids[-1]]
    assert sorted(r.memory.text for r in found) == sorted(OTHERS)
