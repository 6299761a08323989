"""Corrections said mid-call: only the corrected value is kept.

Callers correct themselves as they speak: "Je suis né le 10, non pardon, le 12 mars", "C'est le 06
12…, enfin non, le 06 13…", "Je me suis trompé : c'est le 14 rue…". Stored as said, the wrong value
would be a fact of its own, and a later search could return it. Two cases:

- inside a sentence, a correction marker ("non pardon", "enfin non", "pardon", "je veux dire",
  "plutôt", "je me suis trompé(e)", "je rectifie", "euh non", or a bare "non" after a trailing
  "…") splits it: what follows replaces the
  end of what comes before, from the word the correction starts with ("le 10" → "le 12": the last
  "le" before the marker), or from the last number or placeholder when the correction opens with
  a value; a correction that is a whole statement of its own replaces the clause before it;
- a sentence that opens with a marker corrects the speaker's previous statement in the call, by the
  same substitution (``pipeline`` applies it to the last fact of that speaker).

Pure string work on the pseudonymised text: placeholders (``<PHONE_1>``) are values like numbers.
"""

from __future__ import annotations

import re

# The marker, with what may surround it ("non non, pardon,", "ah non, je me suis trompée :").
_MARKER = (
    r"(?:(?:euh|ah|oh)\s*,?\s*)?(?:"
    r"non\s*,?\s*(?:non\s*,?\s*)?(?:pardon|excusez-moi|attendez|je me trompe|je me suis trompée?)|"
    r"enfin\s*,?\s*non|euh\s*,?\s*non|non\s*,?\s*plutôt|non\s*,?\s*plutot|"
    r"pardon|je veux dire|je voulais dire|je me suis trompée?|je me trompe|je rectifie|"
    r"rectification|correction|au temps pour moi|autant pour moi"
    r")\s*[,:;.!…-]*\s*"
)
_INSIDE = re.compile(rf"(?:(?:\.\.\.|[,;:…-])\s*{_MARKER}|(?:\.\.\.|…)\s*non\b\s*[,:]?\s*)(?=\S)", re.IGNORECASE)
_OPENING = re.compile(rf"^{_MARKER}", re.IGNORECASE)
_FRAME = re.compile(r"^(?:c'est|ce sera|ça sera|ca sera|il s'agit d[eu]|c'était|c'etait)\s+", re.IGNORECASE)
_VALUE = re.compile(r"<[A-Z][A-Z0-9_]*_\d+>|\d[\d\s.,/h:]*\d|\d")
_SUBJECT = re.compile(r"^(?:je|j'|on|nous|il|elle|mon|ma|mes|le membre|le conseiller|vous|votre)\b", re.IGNORECASE)
_CLAUSE_START = re.compile(r"[,;:]\s+")
_ANCHOR_WORDS = 2


def within(sentence: str) -> str:
    """``sentence`` with its corrections applied (unchanged when it has none)."""
    for _ in range(3):  # "le 10, non pardon, le 11, enfin non, le 12": a few rounds
        m = _INSIDE.search(sentence)
        if m is None:
            return sentence
        before, after = sentence[: m.start()], sentence[m.end() :]
        fixed = apply(before, after)
        if fixed is None and not _VALUE.search(after):
            return sentence  # "c'était long… non, rien": nothing to put in place of anything
        sentence = fixed or after
    return sentence


def opening(sentence: str) -> str | None:
    """What a sentence that opens with a correction marker says instead, or None if it does not."""
    m = _OPENING.match(sentence)
    if m is None or m.end() == 0:
        return None
    return sentence[m.end() :].strip()


def apply(previous: str, correction: str) -> str | None:
    """``previous`` with its end replaced by ``correction`` (see the module doc); None when the
    correction gives no place to start from."""
    fix = _FRAME.sub("", correction.strip()).strip()
    if not fix:
        return None
    end = previous.rstrip(" .!…")
    if _SUBJECT.match(fix):  # a statement of its own: it replaces the last clause
        starts = [m.end() for m in _CLAUSE_START.finditer(end)]
        head = end[: starts[-1]] if starts else ""
        return f"{head}{fix}" if head else fix
    at = _anchor(end, fix)
    if at is None:
        return None
    return end[:at] + fix


def _anchor(previous: str, fix: str) -> int | None:
    """Where in ``previous`` the corrected part starts."""
    opening_value = _VALUE.match(fix)
    if opening_value is not None:
        values = list(_VALUE.finditer(previous))
        return values[-1].start() if values else None
    words = fix.split()[:_ANCHOR_WORDS]
    for n in range(len(words), 0, -1):  # "au 14 rue" → the last "au 14", else the last "au"
        lead = " ".join(words[:n])
        at = _last_word(previous, lead)
        if at is not None and _VALUE.search(previous[at:]):
            return at
    return None


def _last_word(text: str, lead: str) -> int | None:
    found = None
    for m in re.finditer(rf"(?<![\w']){re.escape(lead)}(?![\w'])", text, re.IGNORECASE):
        found = m.start()
    return found
