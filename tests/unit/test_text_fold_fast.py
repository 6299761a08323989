"""``normalize`` and ``fold_accents`` give, for any text, exactly what their plain definitions give: the
faster forms (a scan before translating, folding character by character) change no answer. The reference
forms below are the definitions as they read before (NFKC, casefold, both tables, whitespace runs to one
space; NFD of the whole text with its marks dropped)."""

from __future__ import annotations

import re
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from carnet.domain.text import fold, fold_accents, normalize

_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "ʼ": "'", "`": "'", "´": "'"})
_DASHES = str.maketrans({"‐": "-", "‑": "-", "‒": "-", "–": "-", "—": "-", "−": "-"})
_SPACES = re.compile(r"[\s\u00a0\u202f]+")
_LIGATURES = str.maketrans({"œ": "oe", "æ": "ae", "ø": "o", "ł": "l", "đ": "d"})


def normalize_reference(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return _SPACES.sub(" ", text.translate(_APOSTROPHES).translate(_DASHES)).strip()


def fold_accents_reference(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", text.translate(_LIGATURES))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


# French notes' characters, the marks and spaces that meet them, and the rest of Unicode.
_NOTE_CHARS = st.sampled_from([*"aeiouAEIOU éèêëàâçîïôûùüÿœæÉÈÀÇŒ’‘`´–—−‐ \u00a0\u202f\t\n'-:;,.€0123456789",
                               "\u0301", "\u0327", "\u0308", "\u0323", "ﬁ", "Å", "ǅ", "ẞ", "İ"])
TEXTS = st.one_of(st.text(), st.text(alphabet=_NOTE_CHARS, max_size=80))


@settings(max_examples=600, deadline=None)
@given(TEXTS)
def test_normalize_is_its_definition(text: str) -> None:
    assert normalize(text) == normalize_reference(text)


@settings(max_examples=600, deadline=None)
@given(TEXTS)
def test_fold_accents_is_its_definition(text: str) -> None:
    assert fold_accents(text) == fold_accents_reference(text)
    assert fold(text) == fold_accents_reference(normalize_reference(text))


def test_a_note_folds_as_before() -> None:
    note = "Réclamation close : complément de 340 € versé à l’adhérente — œuvre\u00a0sociale, Ça  va."
    assert fold(note) == "reclamation close : complement de 340 € verse a l'adherente - oeuvre sociale, ca va."
