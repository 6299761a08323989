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


WORDS = ["zéro", "un", "deux", "trois", "quatre", "cinq", "six", "sept", "huit", "neuf", "dix", "onze", "douze",
         "seize", "vingt", "vingts", "trente", "soixante", "cent", "cents", "mille", "et"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from([" ", "-", "  "])), min_size=1, max_size=12))
def test_any_run_of_number_words_reads_as_digits(words: list[tuple[str, str]]) -> None:
    text = "au " + "".join(w + sep for w, sep in words) + "merci"
    for view in views(text):
        assert view.text.startswith("au ") and view.text.endswith("merci")
        assert len(view.starts) == len(view.ends) == len(view.text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=60))
def test_any_text_maps_back_inside_itself(text: str) -> None:
    from carnet.domain.pii.detector import PatternDetector

    for view in views(text):
        assert all(0 <= a <= b <= len(text) for a, b in zip(view.starts, view.ends, strict=True))
        assert list(view.starts) == sorted(view.starts)
    for span in PatternDetector().detect(text):
        assert 0 <= span.start < span.end <= len(text)
