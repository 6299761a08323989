"""The shape of a person's name in running text (``domain.pii.name_shape``), without a model."""

from __future__ import annotations

from carnet.domain.pii.name_shape import after_cue, grow, runs
from carnet.domain.pii.spans import PERSON, Span

STOP = frozenset({"appel", "please", "the", "merci", "hier", "grand"})


def stop(word: str) -> bool:
    return word.lower().strip(".,") in STOP


def test_an_entity_is_cut_to_its_runs_of_capitalised_words() -> None:
    text = "Please call back Nour El Houda Bouazizi tomorrow, or Tiago Ferreira da Costa."
    assert [(text[a:b], n) for a, b, n in runs(text, 0, len(text), stop)] == [
        ("Nour El Houda Bouazizi", 4), ("Tiago Ferreira da Costa", 3)]


def test_a_name_found_in_part_takes_the_capitalised_words_beside_it() -> None:
    text = "Appel de Thi Hoa Nguyen ce matin. Merci. Anahit Petrossian, et Jean de La Fontaine."
    found = [Span(text.index("Hoa"), text.index("Hoa") + 3, PERSON, 0.8),
             Span(text.index("Petrossian"), text.index("Petrossian") + 10, PERSON, 0.8),
             Span(text.index("Jean"), text.index("Jean") + 4, PERSON, 0.8)]
    assert [text[s.start : s.end] for s in grow(text, found, stop)] == [
        "Thi Hoa Nguyen", "Anahit Petrossian", "Jean de La Fontaine"]


def test_a_name_does_not_grow_across_a_sentence_or_into_a_stop_word() -> None:
    text = "Dossier Lyon. Petrossian a appelé hier."
    at = text.index("Petrossian")
    assert [text[s.start : s.end] for s in grow(text, [Span(at, at + 10, PERSON, 0.8)], stop)] == ["Petrossian"]


def test_a_lower_case_name_after_a_cue_is_a_name_unless_its_words_are_words() -> None:
    words = {"suivi", "relance", "matin", "banque"}
    text = ("appel de nour el houda bouazizi ce matin; call from thi hoa nguyen about it; appel de suivi; "
            "message de la banque; de la part de maëlann le quéré.")
    assert [text[s.start : s.end] for s in after_cue(text, words.__contains__)] == [
        "nour el houda bouazizi", "thi hoa nguyen", "maëlann le quéré"]
