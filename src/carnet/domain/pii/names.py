"""Given names, to find people written in lower case ("jean dupont rappelle"), where a NER model
trained on edited text sees nothing. A frequent French given name followed by a word that is not a
French function word, written in the same case ("jean dupont", "Jean Dupont", "JEAN DUPONT"), is taken
for a person. Written for the project from common knowledge of
French naming; it errs towards recall (a missed name leaks, a false one costs a placeholder)."""

from __future__ import annotations

import re
import unicodedata
from importlib.resources import files

from carnet.domain.pii.patterns import Recognizer
from carnet.domain.pii.spans import PERSON

GIVEN_NAMES: tuple[str, ...] = tuple(
    line.strip() for line in files(__package__).joinpath("given_names.txt").read_text(encoding="utf-8").splitlines()
    if line.strip() and not line.startswith("#")
)

_FUNCTION_WORDS = frozenset({
    "a", "à", "au", "aux", "avec", "ce", "ces", "cette", "chez", "dans", "de", "des",
    "du", "elle", "en", "est", "et", "il", "ils", "je", "la", "le", "les", "leur",
    "lui", "mais", "me", "mon", "ne", "ni", "nous", "on", "ou", "où", "par", "pas",
    "pour", "qu", "que", "qui", "sa", "se", "ses", "si", "son", "sur", "ta", "te",
    "tes", "ton", "tu", "un", "une", "vous", "y", "a-t-il", "va", "vient", "doit", "peut",
    "veut", "souhaite", "rappelle", "appelle", "dit", "demande", "confirme", "habite", "travaille",
})

def _unaccented(name: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))


# Each name as written and without accents ("Mélanie", "Melanie").
_SPELLINGS = sorted({v for n in GIVEN_NAMES for v in (n, _unaccented(n))}, key=len, reverse=True)
_FOLDED = frozenset(_unaccented(n).casefold() for n in GIVEN_NAMES)


def is_given_name(word: str) -> bool:
    """A given name of the list, whatever its case and accents ("JEAN-BAPTISTE", "Melanie")."""
    return _unaccented(word).casefold() in _FOLDED or all(
        part in _FOLDED for part in _unaccented(word).casefold().split("-") if part)


_GIVEN = "|".join(re.escape(n) for n in _SPELLINGS)
_STOP = "|".join(re.escape(w) for w in sorted(_FUNCTION_WORDS, key=len, reverse=True))

_GIVEN_CAPITALIZED = "|".join(re.escape(n[0].upper() + n[1:]) for n in _SPELLINGS)
_GIVEN_LOWER = "|".join(re.escape(n) for n in sorted({n.lower() for n in _SPELLINGS}, key=len, reverse=True))
_GIVEN_UPPER = "|".join(re.escape(n) for n in sorted({n.upper() for n in _SPELLINGS}, key=len, reverse=True))
# A particle may come first: "Inès d'Alembert", "Jean de La Fontaine".
_PARTICLE = r"(?:d['’]|(?:de|du|des|le|la|van|von|ben)\s+)(?=[A-ZÀ-ÖØ-Þ])"
_SURNAME_CAPITALIZED = rf"(?:{_PARTICLE})?[A-ZÀ-ÖØ-Þ][\wÀ-ÖØ-öø-ÿ'’\-]{{1,30}}"
_SURNAME_ANY = r"[a-zà-öø-ÿA-ZÀ-ÖØ-Þ][\wÀ-ÖØ-öø-ÿ'’\-]{1,30}"


def _given_then(given: str, surname: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w-])((?:{given})(?:-(?:{given}))?\s+(?!(?:{_STOP})\b(?![\s'’]+[A-ZÀ-ÖØ-Þ])){surname})"
                      rf"(?![\w-])")


# A given name then a word that is not a function word, in one case: "jean dupont" (all in lower case,
# as notes are typed in a hurry), "Jean Dupont", "JEAN DUPONT". A capitalised given name followed by a
# word in lower case is the name and a verb ("Mélanie part demain", "did Melanie feel"), never a
# surname: that word is left to the text (the name alone is ``GIVEN_ALONE``'s).
GIVEN_AND_SURNAME = tuple(
    Recognizer(PERSON, _given_then(given, surname), 0.6, group=1)
    for given, surname in ((_GIVEN_LOWER, _SURNAME_ANY), (_GIVEN_CAPITALIZED, _SURNAME_CAPITALIZED),
                           (_GIVEN_UPPER, _SURNAME_CAPITALIZED))
)
# "Emma", "Jean-Pierre": a capitalised given name alone (a lone lower-case "pierre" is too often a word).
GIVEN_ALONE = Recognizer(
    PERSON,
    re.compile(rf"(?<![\w-])((?:{_GIVEN_CAPITALIZED})(?:-(?:{_GIVEN_CAPITALIZED}))?)(?![\w-])"),
    0.6,
    group=1,
)
NAME_RECOGNIZERS = (*GIVEN_AND_SURNAME, GIVEN_ALONE)
