"""French numbers spelled out, as digits: "zéro six douze trente-quatre" is "0 6 12 34", "mille neuf
cent quatre-vingt-cinq" is "1985". Pure.

A phone number or a date of birth dictated to an advisor is often typed as it was said. The grammar
is French number grammar (units, "dix" to "seize", tens to "soixante", "soixante-dix" and
"quatre-vingt(-dix)" built on them, "et un", "cent", "mille"), from general knowledge of the
language, not from any corpus. A run of number words becomes its numbers, one space between two:
the patterns tolerate any grouping of digits, so "0 6 12 34 56 78" is a phone number. The result is
only the view the detectors read (``normalise``); the text as written is what gets replaced.

Two readings. French spelling hyphenates every compound below one hundred ("soixante-quatre",
"quatre-vingt-treize"), so words written apart are separate numbers: "soixante quatre-vingt-treize"
is 60 93, a phone number's pairs ("strict"). Hurried typing drops the hyphens ("mille neuf cent
quatre vingt cinq"): the "loose" reading joins what grammar allows to join. Detectors read both.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

UNITS = {"zero": 0, "un": 1, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "six": 6, "sept": 7, "huit": 8,
         "neuf": 9}
TEENS = {"dix": 10, "onze": 11, "douze": 12, "treize": 13, "quatorze": 14, "quinze": 15, "seize": 16}
TENS = {"vingt": 20, "vingts": 20, "trente": 30, "quarante": 40, "cinquante": 50, "soixante": 60}
HUNDRED = frozenset({"cent", "cents"})
THOUSAND = "mille"
# A lone "un" or "neuf" is an article or "new" far more often than a number: alone, they stay words.
_NOT_ALONE = frozenset({"un", "neuf", "cent", "mille"})

_WORDS = sorted([*UNITS, *TEENS, *TENS, *HUNDRED, THOUSAND, "zéro"], key=len, reverse=True)
_WORD = rf"(?:{'|'.join(_WORDS)})"
# Between two number words: spaces or hyphens, or the pause of a dictation written as a comma or an
# ellipsis ("zéro six, soixante-douze, dix-neuf…"), or the word for the check digits of a NIR or a
# RIB ("…zéro cinquante-trois, clé quatre-vingt-un"): the groups are said apart.
_GAP = r"(?:[ -]+|[ ]*(?:,|…|\.{2,})[ ]*|,?[ ]*\bcl[ée][ ]+)"
_RUN = re.compile(rf"(?<![\w-]){_WORD}(?:[ -]+(?:et[ -]+)?{_WORD})*(?![\w-])", re.IGNORECASE)
_DICTATED_RUN = re.compile(rf"(?<![\w-]){_WORD}(?:{_GAP}(?:et[ -]+)?{_WORD})*(?![\w-])", re.IGNORECASE)
_APART = re.compile(r",?[ ]*\bcl[ée][ ]+|[ ]*(?:,|…|\.{2,})[ ]*|[ ]+", re.IGNORECASE)
# A day before its month is a number ("neuf février"), even a word that alone would not be one.
_MONTH = re.compile(r" (?:janvier|f[ée]vrier|mars|avril|mai|juin|juillet|ao[uû]t|septembre|octobre|novembre|"
                    r"d[ée]cembre)\b", re.IGNORECASE)

Piece = tuple[str, int, int]


def spelled_numbers(text: str, *, strict: bool = True, pauses: bool = False) -> list[Piece]:
    """Each run of French number words in ``text``: its digits and where it is; with ``pauses``, a
    run goes on across the commas and ellipses of a dictation (another reading: in a sentence, "six,
    deux fois" are two numbers)."""
    pieces: list[Piece] = []
    for m in (_DICTATED_RUN if pauses else _RUN).finditer(text):
        groups = [[_fold(t) for t in g.split("-") if t] for g in _APART.split(m.group()) if g]
        words = [t for g in groups for t in g if t != "et"]
        if len(words) == 1 and words[0] in _NOT_ALONE and not _MONTH.match(text, m.end()):
            continue
        pieces.append((" ".join(str(n) for n in numbers(groups, strict=strict)), m.start(), m.end()))
    return pieces


def numbers(groups: list[list[str]], *, strict: bool = True) -> list[int]:
    """The numbers said by folded number words, given as the groups written apart (``[["six"],
    ["soixante", "dix", "huit"]]`` → 6, 78)."""
    return _Reader(groups, strict).read()


@dataclass
class _Reader:
    groups: list[list[str]]
    strict: bool

    def __post_init__(self) -> None:
        self.t = [w for g in self.groups for w in g]
        self.first: set[int] = set()  # indices of the tokens that open a group
        i = 0
        for g in self.groups:
            self.first.add(i)
            i += len(g)

    def read(self) -> list[int]:
        out: list[int] = []
        i = 0
        while i < len(self.t):
            if self.t[i] == "et":
                i += 1
                continue
            if i and self.t[i - 1] == "zero" and self.t[i] in UNITS and self._apart(i + 1):
                value, i = UNITS[self.t[i]], i + 1  # "zéro quatre vingt et un": a pair read digit by digit
            else:
                value, i = self._number(i)
            out.append(value)
        return out

    def _apart(self, i: int) -> bool:
        """Token ``i`` opens a group (or the end): the one before it was written on its own."""
        return i >= len(self.t) or i in self.first

    def _joined(self, i: int) -> bool:
        """Token ``i`` may be read with the one before: same group, or any in the loose reading."""
        return i < len(self.t) and (not self.strict or i not in self.first)

    def _number(self, i: int) -> tuple[int, int]:
        t = self.t
        if t[i] == "zero":
            return 0, i + 1
        value, i = self._below_1000(i)
        if i < len(t) and t[i] == THOUSAND and value < 1000:
            value, i = max(value, 1) * 1000, i + 1
            if i < len(t) and t[i] not in ("zero", "et"):
                rest, i = self._below_1000(i)
                value += rest
        return value, i

    def _below_1000(self, i: int) -> tuple[int, int]:
        t = self.t
        if t[i] == THOUSAND:
            return 0, i
        if t[i] in HUNDRED:
            value, i = 100, i + 1
        else:
            value, i = self._below_100(i)
            if not (i < len(t) and t[i] in HUNDRED and 2 <= value <= 9):
                return value, i
            value, i = value * 100, i + 1
        if i < len(t) and t[i] not in ("zero", "et", THOUSAND) and t[i] not in HUNDRED:
            rest, i = self._below_100(i)
            value += rest
        return value, i

    def _below_100(self, i: int) -> tuple[int, int]:
        t, word = self.t, self.t[i]
        if word == "quatre" and self._joined(i + 1) and t[i + 1] in ("vingt", "vingts"):
            return self._tens_and(80, i + 2)
        if word in TENS:
            return self._tens_and(TENS[word], i + 1)
        if word == "dix" and self._joined(i + 1) and t[i + 1] in ("sept", "huit", "neuf"):
            return 10 + UNITS[t[i + 1]], i + 2
        if word in TEENS:
            return TEENS[word], i + 1
        return UNITS.get(word, 0), i + 1

    def _tens_and(self, tens: int, i: int) -> tuple[int, int]:
        """What may follow a ten: a unit ("vingt-deux", "vingt et un"), or for 60 and 80 a number from
        10 to 19 ("soixante-douze", "quatre-vingt-dix-sept")."""
        t = self.t
        et = i < len(t) and t[i] == "et"
        j = i + 1 if et else i
        if j >= len(t) or not (et or self._joined(j)):
            return tens, i
        if tens in (60, 80):
            if t[j] == "dix" and self._joined(j + 1) and t[j + 1] in ("sept", "huit", "neuf"):
                return tens + 10 + UNITS[t[j + 1]], j + 2
            if t[j] in TEENS:
                return tens + TEENS[t[j]], j + 1
        if t[j] in UNITS and t[j] != "zero" and not (j + 1 < len(t) and t[j + 1] in HUNDRED):
            return tens + UNITS[t[j]], j + 1
        return tens, i


def _fold(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c)).lower()
