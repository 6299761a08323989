"""The text the detectors read, and the way back to the text as written. Pure.

Personal data is found on a normalised view of a text, never on the text as typed: Unicode NFKC
(fullwidth "０６" and "＠" become "06" and "@", ligatures and compatibility forms their plain
letters), digits of any script as ASCII digits, zero-width characters and soft hyphens removed, every
dash one "-", every space (no-break, thin, tab) one space and runs of them one, e-mail markers written
around a word ("(at)", "[dot]") plain "@" and ".", and French numbers spelled out ("zéro six douze…")
as digits (``numbers_fr``).
The patterns then see one spelling of each format, whatever the keyboard or the evasion.

Each character of the view remembers the characters of the original it came from, so a span found
on the view is mapped back (``Normalised.back``) to the whole original spelling: a replacement in
``pseudo_text`` removes what was written, zero-width characters and spelled words included.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from carnet.domain.pii.numbers_fr import spelled_numbers
from carnet.domain.pii.spans import Span

# Format characters that render as nothing (Unicode category Cf, the ones seen in pasted text).
_INVISIBLE = frozenset("\u00ad\u180e\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff")
# Hyphens, dashes and minus signs that NFKC keeps apart from "-".
_DASHES = frozenset("\u2010\u2011\u2012\u2013\u2014\u2015\u2043\u2212\u02d7\ufe58\ufe63\uff0d")
_SPACES = re.compile(r"[^\S\n]{2,}|[^\S\n ]")
# "(at)", "[at]", "{arobase}", "<at>", "(a)" and "(dot)", "[point]": the markers people write to
# keep an address from robots (and from Carnet).
_AT = re.compile(r" ?[(\[{<] ?(?:at|arobase|arrobase|a|@) ?[)\]}>] ?", re.IGNORECASE)
_DOT = re.compile(r" ?[(\[{<] ?(?:dot|point|\.) ?[)\]}>] ?", re.IGNORECASE)

# A dictated number's groups written with the pauses between them: "FR76, 1348, 5008…", "FR76… 1741…
# 8000…", "087… 89", "087, clé 89". Between a digit and a digit, a comma followed by a space (never a
# decimal comma: "212,40"), an ellipsis or the word for a NIR's or a RIB's check digits ("clé") is one
# space, as the patterns expect between groups.
_PAUSE = re.compile(r"(?<=\d)(?:,[ ]+|[ ]*(?:…|\.{2,})[ ]*|,?[ ]*\bcl[ée][ ]+)(?=\d)", re.IGNORECASE)

Piece = tuple[str, int, int]  # replacement text, and the view positions it stands for


@dataclass(frozen=True, slots=True)
class Normalised:
    text: str
    starts: tuple[int, ...]  # for each character of ``text``, where its origin starts in the original
    ends: tuple[int, ...]  # and where it ends

    def back(self, span: Span) -> Span:
        """The span of the original text a span of the view stands for."""
        if span.end <= span.start:
            return Span(self.starts[span.start], self.starts[span.start], span.kind, span.score)
        return Span(self.starts[span.start], self.ends[span.end - 1], span.kind, span.score)


def normalise(text: str, *, strict: bool = True) -> Normalised:
    """The view of ``text`` the detectors read; ``strict``: which reading of spelled-out numbers
    (``numbers_fr``: words written apart are separate numbers, or joined as grammar allows)."""
    base = _written(text)
    return _apply(base, spelled_numbers(base.text, strict=strict))


def views(text: str) -> list[Normalised]:
    """The strict view, the loose one when spelled-out numbers read otherwise in it, and the dictated
    one when the text has a dictation's pauses between numbers (a separate reading: "au 06 12 34 56 78,
    2 fois par jour" must not become one longer number)."""
    base = _written(text)
    strict = spelled_numbers(base.text)
    loose = spelled_numbers(base.text, strict=False) if strict else strict
    out = [_apply(base, strict)] if loose == strict else [_apply(base, strict), _apply(base, loose)]
    paused = _sub(base, _PAUSE, lambda m: " ")
    if not strict and paused.text == base.text:
        return out  # no number read and no pause: no dictated reading to add (most texts and questions)
    dictated = spelled_numbers(paused.text, pauses=True)
    if paused.text != base.text or dictated != strict:
        out.append(_apply(paused, dictated))
    return out


def _written(text: str) -> Normalised:
    """Everything but the spelled-out numbers."""
    view = _characters(text)
    view = _sub(view, _SPACES, lambda m: " ")
    view = _sub(view, _AT, lambda m: "@")
    return _sub(view, _DOT, lambda m: ".")


def _characters(text: str) -> Normalised:
    """NFKC per character (with its combining marks), invisible characters dropped, dashes one."""
    if text.isascii():
        return Normalised(text, tuple(range(len(text))), tuple(range(1, len(text) + 1)))
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    i, n = 0, len(text)
    while i < n:
        j = i + 1
        while j < n and unicodedata.combining(text[j]):
            j += 1
        if text[i] not in _INVISIBLE:
            for c in unicodedata.normalize("NFKC", text[i:j]):
                if c in _INVISIBLE:
                    continue
                if c.isdecimal() and not c.isascii():  # Arabic-Indic, Devanagari… digits: NFKC keeps them
                    c = str(unicodedata.decimal(c))
                chars.append("-" if c in _DASHES else c)
                starts.append(i)
                ends.append(j)
        i = j
    return Normalised("".join(chars), tuple(starts), tuple(ends))


def _sub(view: Normalised, pattern: re.Pattern[str], repl: Callable[[re.Match[str]], str]) -> Normalised:
    return _apply(view, [(repl(m), m.start(), m.end()) for m in pattern.finditer(view.text)])


def _apply(view: Normalised, pieces: list[Piece]) -> Normalised:
    """``view`` with each piece's positions replaced by its text; every replacement character maps to
    the whole original extent of what it replaces. Pieces are in order and do not overlap."""
    if not pieces:
        return view
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    last = 0
    for new, a, b in pieces:
        chars.append(view.text[last:a])
        starts.extend(view.starts[last:a])
        ends.extend(view.ends[last:a])
        chars.append(new)
        starts.extend([view.starts[a]] * len(new))
        ends.extend([view.ends[b - 1]] * len(new))
        last = b
    chars.append(view.text[last:])
    starts.extend(view.starts[last:])
    ends.extend(view.ends[last:])
    return Normalised("".join(chars), tuple(starts), tuple(ends))
