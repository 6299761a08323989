"""What a question asks for: the current state. Sentences written for these tests."""

from __future__ import annotations

from dataclasses import fields

import pytest
from hypothesis import given
from hypothesis import strategies as st

from carnet.domain.query_intent import CURRENT_RECENCY_FACTOR, read_intent
from carnet.domain.scoring import Weights


@pytest.mark.parametrize(
    "question",
    [
        "Quel est son RIB actuellement ?",
        "Elle travaille où aujourd'hui ?",
        "Son plafond de carte, désormais ?",
        "Où en est la réclamation ?",
        "A-t-il toujours un crédit auto ?",
        "What is her current job?",
    ],
)
def test_current_state_questions(question: str) -> None:
    assert read_intent(question).current


@pytest.mark.parametrize("question", ["Quand a-t-il ouvert son livret ?", "Il a des enfants ?", "Adresse ?"])
def test_other_questions_do_not_ask_for_the_current_state(question: str) -> None:
    assert not read_intent(question).current


def test_a_current_state_question_weighs_recency_more_and_nothing_else() -> None:
    base = Weights()
    raised = read_intent("Quelle est sa banque actuelle ?").weights(base)
    assert raised.recency == pytest.approx(base.recency * CURRENT_RECENCY_FACTOR)
    assert CURRENT_RECENCY_FACTOR > 1
    for f in fields(Weights):
        if f.name != "recency":
            assert getattr(raised, f.name) == getattr(base, f.name)
    assert read_intent("Quelle banque ?").weights(base) is base


@given(st.text(max_size=120))
def test_any_text_reads_without_error(question: str) -> None:
    intent = read_intent(question)
    assert intent.weights(Weights()).recency >= Weights().recency
