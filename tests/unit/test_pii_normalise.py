"""The view detectors read (``domain.pii.normalise``) and the way back to the text as written."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from carnet.domain.pii.normalise import normalise, views
from carnet.domain.pii.numbers_fr import numbers
from carnet.domain.pii.spans import Span
from tests.support.pii_spellings import french


@pytest.mark.parametrize(("text", "view"), [
    ("ＦＲ７６\u200b 3000", "FR76 3000"),
    ("06\u00a0\u00a012\u202f34 \t56", "06 12 34 56"),
    ("jean (at) gmail [dot] com", "jean@gmail.com"),
    ("zéro six douze trente-quatre", "0 6 12 34"),
    ("mille neuf cent quatre-vingt-cinq", "1985"),
    ("deux enfants et un chien neuf", "2 enfants et un chien neuf"),  # a lone "un", "neuf" stay words
])  # fmt: skip
def test_the_view(text: str, view: str) -> None:
    assert normalise(text).text == view


def test_a_span_of_the_view_is_the_whole_original_spelling() -> None:
    text = "tél ０６\u200b１２ 34 ou zéro six"
    view = normalise(text)
    assert view.text == "tél 0612 34 ou 0 6"
    start = view.text.index("0612 34")
    assert view.back(Span(start, start + len("0612 34"), "PHONE", 1.0)).text(text) == "０６\u200b１２ 34"
    at = view.text.index("0 6")
    assert view.back(Span(at, at + 3, "PHONE", 1.0)).text(text) == "zéro six"


def test_words_written_apart_are_read_both_ways() -> None:
    assert [v.text for v in views("soixante douze")] == ["60 12", "72"]
    assert [v.text for v in views("zéro quatre vingt et un")] == ["0 4 21"]


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=9999))
def test_every_number_written_in_french_reads_back(n: int) -> None:
    groups = [w.split("-") for w in french(n).split()]
    assert numbers(groups) == [n]
