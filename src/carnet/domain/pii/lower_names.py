"""Names typed in lower case in French notes ("kenji n'diaye conteste", "Mathis silva a déclaré"). Pure.

Notes typed in a hurry drop capitals, and a model trained on edited text then sees nothing. In a
French text, a word that is neither a French word (``is_word``: a lexicon the caller gives) nor a
function word, beside another such word or right after a name, is taken for a name: "kenji n'diaye",
"Mathis" + "silva". The rule is French only: in an English text every word is "not French", so there a
lower-case word is never taken for a name this way (``after_cue`` still finds one after "call from").
Function words tell the language, from general knowledge of both languages.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from carnet.domain.pii.name_shape import PARTICLES, is_language_word
from carnet.domain.pii.spans import PERSON, Span

# Words of one language only ("a" and "on" are both French and English).
_FRENCH = frozenset("le la les un une des du de et est sont pour que qui dans avec sur au aux il elle nous vous "
                    "ils elles ne pas ce cette son sa ses leur mais ou donc à été par je se".split())
_ENGLISH = frozenset("the an and is are was were to of in for that this with you i my it we they he she "
                     "have has had be been do did not but or so what how".split())
_LOWER = re.compile(r"(?<![\w'’-])([a-zà-öø-ÿ]+(?:['’-][a-zà-öø-ÿ]+)*)(?![\w'’-])")
_MIN = 3  # shorter words are too often abbreviations ("rdv", "cb" are caught by the lexicon or kept)


def is_french(text: str) -> bool:
    words = re.findall(r"[a-zà-ÿ']+", text.lower())
    fr = sum(w in _FRENCH for w in words)
    return fr >= 1 and fr > sum(w in _ENGLISH for w in words)


def unknown_pairs(text: str, is_word: Callable[[str], bool], score: float = 0.6) -> list[Span]:
    """Runs of two or three lower-case words that are no French word nor function word."""
    if not is_french(text):
        return []
    spans: list[Span] = []
    run: list[tuple[int, int]] = []
    for m in _LOWER.finditer(text):
        if run and text[run[-1][1] : m.start()] == " " and _unknown(m.group(), is_word) and len(run) < 3:
            run.append(m.span())
            continue
        if len(run) >= 2:
            spans.append(Span(run[0][0], run[-1][1], PERSON, score))
        run = [m.span()] if _unknown(m.group(), is_word) else []
    if len(run) >= 2:
        spans.append(Span(run[0][0], run[-1][1], PERSON, score))
    return spans


def with_lower_surname(text: str, spans: Iterable[Span], is_word: Callable[[str], bool]) -> list[Span]:
    """Each PERSON span followed by a lower-case word that is no French word takes it: "Mathis silva"."""
    if not is_french(text):
        return list(spans)
    out = []
    for s in spans:
        m = _LOWER.match(text, s.end + 1) if s.kind == PERSON and text[s.end : s.end + 1] == " " else None
        out.append(Span(s.start, m.end(), s.kind, s.score) if m and _unknown(m.group(), is_word) else s)
    return out


def _unknown(word: str, is_word: Callable[[str], bool]) -> bool:
    bare = re.sub(r"^[dln]['’]", "", word)
    if len(bare) < _MIN or word in PARTICLES or is_language_word(word, is_word):
        return False
    return not any(is_word(w) for w in {word, bare, *re.split(r"['’-]", word)} if len(w) >= _MIN)
