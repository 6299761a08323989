"""Who said a line of dialogue (``domain.speakers``): sentences written for these tests."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from carnet.domain.speakers import speaker, spoken_by


@pytest.mark.parametrize(("text", "who"), [
    ("Melanie: We went camping last week.", "melanie"),
    ("Jean Dupont : d'accord, je rappelle demain.", "jean dupont"),
    ("Élodie: J'ai reçu le courrier.", "elodie"),
    ("Le membre habite à Lyon depuis 2019.", None),
    ("Appel du 12 mars 2026 : déclaration d'un dégât des eaux.", None),  # a heading, not a speaker
    ("12:30 rendez-vous", None),
    ("https://example.org", None),
])  # fmt: skip
def test_the_speaker_of_a_line(text: str, who: str | None) -> None:
    assert speaker(text) == who


def test_a_line_is_said_by_a_name_or_its_first_word() -> None:
    assert spoken_by("Melanie: We went camping.", ["Melanie"])
    assert spoken_by("Melanie Smith: We went camping.", ["melanie"])
    assert spoken_by("Melanie: We went camping.", ["Melanie Smith"])
    assert not spoken_by("Caroline: Melanie went camping.", ["Melanie"])
    assert not spoken_by("Melanie went camping.", ["Melanie"])
    assert not spoken_by("Melanie: hi", [])


@given(st.text(max_size=80), st.lists(st.text(max_size=20), max_size=3))
def test_any_text_and_names_are_judged_without_error(text: str, names: list[str]) -> None:
    assert spoken_by(text, names) in (True, False)
    if speaker(text) is None:
        assert not spoken_by(text, names)
