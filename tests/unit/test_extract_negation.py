"""Spoken negation gets its "ne" back before the statement moves to the third person; a comparison
("plus cher", "plus de 60 ans") and "pas mal" are left alone."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from carnet.adapters.extractors.rules import RuleExtractor
from carnet.domain.extraction.rules.negation import spoken_ne
from carnet.domain.extraction.rules.rewrite_fr import MEMBER, rewrite_fr
from carnet.domain.intake import Message


@pytest.mark.parametrize(("said", "written"), [
    ("Je veux pas de rendez-vous le samedi.", "Je ne veux pas de rendez-vous le samedi."),
    ("J'habite plus à Brest depuis l'été.", "Je n'habite plus à Brest depuis l'été."),
    ("Je l'ai jamais reçu, ce courrier.", "Je ne l'ai jamais reçu, ce courrier."),
    ("C'est pas le bon RIB.", "Ce n'est pas le bon RIB."),
    ("On nous a rien envoyé.", "On ne nous a rien envoyé."),
    ("Il y a plus de fuite depuis la réparation.", "Il n'y a plus de fuite depuis la réparation."),
    ("J'en veux pas, je peux pas payer ça.", "Je n'en veux pas, je ne peux pas payer ça."),
    ("Vous serez plus prélevée à partir de mai.", "Vous ne serez plus prélevée à partir de mai."),
])
def test_the_dropped_ne_comes_back(said: str, written: str) -> None:
    assert spoken_ne(said) == written


@pytest.mark.parametrize(("said", "fact"), [
    ("Ça me concerne plus, ce contrat.", "Ça ne concerne plus le membre, ce contrat."),
    ("Il me répond jamais, ce garage.", "Il ne répond jamais au membre, ce garage."),
])
def test_the_member_comes_after_the_negation(said: str, fact: str) -> None:
    assert rewrite_fr(said, MEMBER) == fact


@pytest.mark.parametrize("said", [
    "Je paie plus cher qu'avant.",  # a comparison
    "J'ai plus de 60 ans maintenant.",
    "Ça coûte plus de 200 euros.",
    "J'ai pas mal de frais ce mois-ci.",  # quite a lot
    "Je ne veux pas être appelée le soir.",  # already written
    "Ça ne vous concerne pas, c'est chez un autre assureur.",  # "vous" is no subject there
    "Il ne nous en a jamais parlé.",
    "Je n'ai plus de voiture.",
    "Elle travaille à mi-temps depuis mars.",
])
def test_comparisons_and_written_negations_are_left_alone(said: str) -> None:
    assert spoken_ne(said) == said


def test_the_fact_in_the_third_person_keeps_the_negation_readable() -> None:
    extractor = RuleExtractor()
    found = extractor.extract([Message("user", "Je travaille plus chez mon ancien employeur depuis janvier.")],
                              session_id=None, locale="fr")
    assert [f.text for f in found.facts] == ["Le membre ne travaille plus chez son ancien employeur depuis janvier."]
    sold = extractor.extract([Message("user", "Je veux pas qu'on m'appelle pour me vendre un placement.")],
                             session_id=None, locale="fr")
    assert "vendre au membre" in sold.facts[0].text and "ne veut pas" in sold.facts[0].text


words = st.sampled_from("je j'ai il on c'est ça vous me l'ai en y ai veux est habite paie pas plus jamais rien "
                        "cher de 60 mal que le la Brest , .".split())


def _said(text: str) -> str:
    """The words said, whatever was written: elisions undone, every "ne" taken out."""
    unelided = re.sub(r"\b([jJcC])'", r"\1e ", text)
    return " ".join(re.sub(r"(?<![\w'])(?:ne |n')", "", unelided).split())


@given(st.lists(words, max_size=14).map(" ".join))
@example("je vous vous je pas")  # found by this test in CI: the second "vous" read as a new subject
def test_it_only_ever_adds_a_ne_and_twice_is_once(text: str) -> None:
    out = spoken_ne(text)
    assert spoken_ne(out) == out
    assert _said(out) == _said(text)


def test_the_property_sees_an_added_ne() -> None:
    assert _said(spoken_ne("je veux pas")) == _said("je veux pas") == "je veux pas"
    assert _said(spoken_ne("j'ai plus")) == "je ai plus" and spoken_ne("j'ai plus") == "je n'ai plus"
