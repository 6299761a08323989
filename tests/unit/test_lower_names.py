"""Names typed in lower case in French notes (``domain.pii.lower_names``), with a small lexicon."""

from __future__ import annotations

from carnet.domain.pii.lower_names import is_french, unknown_pairs, with_lower_surname
from carnet.domain.pii.spans import PERSON, Span

LEXICON = frozenset("membre conteste prélèvement carte part demain déclaré sinistre client smartphone mail rdv "
                    "pris ok roux".split())


def test_two_unknown_lower_case_words_of_a_french_text_are_a_name() -> None:
    text = "kenji n'diaye conteste le prélèvement sur la carte."
    assert [text[s.start : s.end] for s in unknown_pairs(text, LEXICON.__contains__)] == ["kenji n'diaye"]


def test_french_words_and_english_texts_are_left_alone() -> None:
    assert unknown_pairs("Le client a un smartphone, mail ok, rdv pris pour la suite.", LEXICON.__contains__) == []
    english = "kenji said the payment failed twice and she was upset about it"
    assert not is_french(english) and unknown_pairs(english, LEXICON.__contains__) == []


def test_a_name_takes_the_lower_case_surname_after_it_but_not_a_word() -> None:
    text = "Le membre Mathis silva a déclaré le sinistre, Mélanie part demain."
    spans = [Span(text.index("Mathis"), text.index("Mathis") + 6, PERSON, 0.6),
             Span(text.index("Mélanie"), text.index("Mélanie") + 7, PERSON, 0.6)]
    assert [text[s.start : s.end] for s in with_lower_surname(text, spans, LEXICON.__contains__)] == [
        "Mathis silva", "Mélanie"]
