"""The learned turn filter: its features, its model file, the alignment that labels turns, its fit, and
the rule extractor reading only the turns it keeps."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest

from carnet.adapters.extractors.rules import RuleExtractor
from carnet.bench.scenarios_match import Weights
from carnet.bench.turns_align import label_subject
from carnet.bench.turns_fit import choose_keep_at
from carnet.domain.extraction.turn_features import FEATURES, turn_features
from carnet.domain.extraction.turn_model import TurnModel, TurnModelError
from carnet.domain.intake import Message

AT = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
CALL = [
    Message("advisor", "Bonjour, vous êtes bien chez votre assurance, que puis-je faire pour vous ?", AT),
    Message("user", "Bonjour. J'ai déménagé : j'habite maintenant au <ADDRESS_1>, depuis le 14 février.", AT),
    Message("advisor", "C'est noté. Votre cotisation passe à 212,40 euros par mois.", AT),
    Message("user", "D'accord, merci, au revoir.", AT),
]


def _row(i: int) -> dict[str, float]:
    return dict(zip(FEATURES, turn_features(CALL)[i], strict=True))


def test_features_read_speaker_place_values_and_grammar() -> None:
    told, amount, bye = _row(1), _row(2), _row(3)
    assert (told["member"], told["opening"], told["first_person"], told["date"]) == (1.0, 1.0, 1.0, 1.0)
    assert told["placeholders"] > 0 and told["names_only"] == 0.0 and told["change"] == 1.0
    assert (amount["member"], amount["amount"], amount["second_person"]) == (0.0, 1.0, 1.0)
    assert (bye["closing"], bye["politeness"], bye["position"]) == (1.0, 1.0, 1.0)
    assert _row(0)["question"] == 1.0 and told["answers"] == 1.0
    assert len(turn_features(CALL)) == len(CALL) and all(len(r) == len(FEATURES) for r in turn_features(CALL))


def test_a_read_back_is_not_new_in_the_call() -> None:
    call = [Message("user", "Mon numéro de contrat est le 4471 et je paie 30 euros.", AT),
            Message("advisor", "Contrat 4471, 30 euros, c'est noté.", AT)]
    rows = [dict(zip(FEATURES, r, strict=True)) for r in turn_features(call)]
    assert rows[0]["novelty"] == 1.0 and rows[1]["novelty"] < 0.5 and rows[1]["echo"] > 0


def _model(weights: dict[str, float], keep_at: float = 0.5) -> TurnModel:
    return TurnModel("t", tuple(0.0 for _ in FEATURES), tuple(1.0 for _ in FEATURES),
                     tuple(weights.get(f, 0.0) for f in FEATURES), -1.0, keep_at)


def test_the_model_reads_back_what_it_writes_and_refuses_other_files() -> None:
    model = _model({"amount": 3.0, "placeholders": 2.0})
    assert TurnModel.from_mapping(model.to_mapping()) == model
    assert model.keep(CALL) == [False, True, True, False]
    for broken in ({**model.to_mapping(), "features": ["x"]}, {**model.to_mapping(), "keep_at": 2},
                   {**model.to_mapping(), "weights": [1.0]}, {**model.to_mapping(), "version": ""}):
        with pytest.raises(TurnModelError):
            TurnModel.from_mapping(broken)


def test_the_rule_extractor_reads_only_the_kept_turns_but_keeps_the_context() -> None:
    call = [Message("advisor", "Quel est votre nouveau numéro de contrat ?", AT),
            Message("user", "C'est le 4471.", AT),
            Message("user", "Et mon chat s'appelle Félix, il a trois ans et il adore les croquettes au saumon.", AT)]
    everything = RuleExtractor().extract(call, session_id=None, locale="fr").facts
    filtered = RuleExtractor(_model({"number": 4.0})).extract(call, session_id=None, locale="fr").facts
    assert any("Félix" in f.text for f in everything)
    assert [f.text for f in filtered if "Félix" in f.text] == []
    assert any("4471" in f.text and "contrat" in f.text for f in filtered)  # read with the advisor's question


def test_a_fact_labels_the_turns_of_its_call_that_hold_its_words() -> None:
    sdata: dict[str, Any] = {
        "facts": [{"at": "2026-03-02T10:30:00+00:00", "text": "Cotisation habitation : 212,40 euros par mois."},
                  {"at": "2026-05-01T10:30:00+00:00", "text": "Le membre part vivre à Quimper."}],
        "calls": [{"at": "2026-03-02T10:00:00+00:00", "messages": [
                      {"content": "Bonjour !"}, {"content": "Votre cotisation habitation est de 212,40 euros."}]},
                  {"at": "2026-05-01T10:00:00+00:00", "messages": [
                      {"content": "Je pars vivre à Quimper."}, {"content": "Votre cotisation reste la même."}]}],
    }
    weights = Weights.of(f["text"] for f in sdata["facts"])
    labels, per_call, unaligned = label_subject(sdata, weights)
    assert labels == [[False, True], [True, False]]
    assert (per_call, unaligned) == ([1, 1], 0)


def test_keep_at_is_the_probability_with_the_best_f1_on_the_training_turns() -> None:
    p = np.array([0.9, 0.8, 0.7, 0.6, 0.2, 0.1])
    y = np.array([1.0, 1.0, 0.0, 1.0, 0.0, 0.0])
    assert choose_keep_at(p, y) == 0.6  # keeps 4 turns, 3 right: F1 6/7, above 0.8's 4/5


def test_one_side_alone_is_read_whole_the_filter_learned_on_dialogues() -> None:
    notes = [Message("user", "Le membre habite à Lyon 7e.", AT), Message("user", "Bonjour merci au revoir.", AT)]
    assert _model({}, keep_at=0.99).keep(notes) is None
    assert _model({}, keep_at=0.99).keep(CALL) == [False] * len(CALL)


def test_weighing_gives_a_fact_the_mean_of_the_rules_importance_and_its_turns_probability() -> None:
    plain = RuleExtractor(_model({"amount": 3.0})).extract(CALL, session_id=None, locale="fr").facts
    weighed = RuleExtractor(_model({"amount": 3.0}), weigh=True).extract(CALL, session_id=None, locale="fr").facts
    assert [f.text for f in plain] == [f.text for f in weighed] and plain
    model = _model({"amount": 3.0})
    p = model.probabilities(CALL)
    assert p is not None
    assert weighed[0].importance == round((plain[0].importance + p[2]) / 2, 4)  # the advisor's amount turn


def test_a_fact_said_in_other_words_is_aligned_by_meaning_in_its_own_call_when_asked() -> None:
    sdata: dict[str, Any] = {
        "facts": [{"at": "2026-03-02T10:30:00+00:00", "text": "REFUSE L'ENREGISTREMENT des appels."}],
        "calls": [{"at": "2026-03-02T10:00:00+00:00", "messages": [
            {"content": "Bonjour !"}, {"content": "Moi je préfère pas qu'on me garde sur bande."}]}],
    }
    weights = Weights.of(f["text"] for f in sdata["facts"])
    assert label_subject(sdata, weights) == ([[False, False]], [0], 1)
    asked: list[tuple[str, list[str]]] = []

    def nearest(fact: str, turns: Sequence[str]) -> int:
        asked.append((fact, list(turns)))
        return 1

    assert label_subject(sdata, weights, nearest) == ([[False, True]], [1], 1)  # still counted unaligned by words
    assert asked == [("REFUSE L'ENREGISTREMENT des appels.",
                      ["Bonjour !", "Moi je préfère pas qu'on me garde sur bande."])]
