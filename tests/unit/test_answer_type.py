"""The answer type a question asks for, and whether a text gives one. Sentences written for these tests."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from carnet.domain.answer_type import Answer, asked, gives


@pytest.mark.parametrize(
    ("question", "wanted"),
    [
        ("Combien verse-t-elle chaque trimestre ?", Answer.AMOUNT),
        ("Le montant de la franchise ?", Answer.AMOUNT),
        ("Quel est le tarif de son option dentaire ?", Answer.AMOUNT),
        ("How much does he pay for the car policy?", Answer.AMOUNT),
        ("Quand a-t-il résilié son contrat habitation ?", Answer.DATE),
        ("Depuis quand est-elle en arrêt ?", Answer.DATE),
        ("À quelle date l'expert passe-t-il ?", Answer.DATE),
        ("When did she move to Lyon?", Answer.DATE),
    ],
)
def test_questions_that_ask_for_a_value(question: str, wanted: Answer) -> None:
    assert asked(question) is wanted


@pytest.mark.parametrize(
    "question",
    [
        "Combien d'enfants a-t-il ?",     # a count, not an amount
        "Combien de temps dure le prêt ?",  # a duration
        "Où habite-t-elle ?",
        "Comment préfère-t-il être contacté ?",
        "Adresse ?",
    ],
)
def test_other_questions_ask_for_neither(question: str) -> None:
    assert asked(question) is None


@pytest.mark.parametrize(
    "text",
    ["Sa cotisation passe à 61,40 € par mois.", "Remboursement de 1 250 euros reçu.",
     "He paid $300 for the repair.", "Franchise : 150 EUR."],
)
def test_texts_that_give_an_amount(text: str) -> None:
    assert gives(text, Answer.AMOUNT)


@pytest.mark.parametrize(
    "text",
    ["Il trouve sa cotisation trop élevée.", "Elle a 3 enfants.", "Contrat n° 48 en cours.",
     "Il rappellera le 14 mai."],
)
def test_texts_without_an_amount(text: str) -> None:
    assert not gives(text, Answer.AMOUNT)


@pytest.mark.parametrize(
    "text",
    ["Sinistre déclaré le 1er février.", "Arrêt de travail depuis mars 2024.", "Rendez-vous le 07/11/2025.",
     "Client since 2019.", "The expert came on June 3rd.", "Échéance au 2026-01-15."],
)
def test_texts_that_give_a_date(text: str) -> None:
    assert gives(text, Answer.DATE)


@pytest.mark.parametrize(
    "text",
    ["Il préfère être appelé le matin.", "Cotisation de 48 € par mois.", "Une Clio de 2018.",
     "Taux de 1.5 % sur le livret.", "Elle a 2 véhicules."],
)
def test_texts_without_a_date(text: str) -> None:
    assert not gives(text, Answer.DATE)


@given(st.text(max_size=300))
def test_any_text_is_read_without_error(text: str) -> None:
    asked(text)
    for wanted in Answer:
        gives(text, wanted)
