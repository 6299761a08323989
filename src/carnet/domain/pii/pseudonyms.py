"""Pseudonyms consistent per subject: the same person or IBAN is the same placeholder in every record.

A subject's ``PseudonymMap`` turns each value found (normalised: case, accents, spacing) into a typed
placeholder, ``<PERSON_1>``, ``<IBAN_1>``… numbered in the order they were first seen. The map is
personal data itself: it is stored sealed under the subject's data key, and dies with it.

A person is also known by parts of their name: once "Jean-Baptiste Lefèvre" is ``<PERSON_1>``,
"Lefèvre" alone and "Jean-Baptiste" alone are ``<PERSON_1>`` too (unless another name of the
subject already claimed that part), so "M. Lefèvre a rappelé" and a question about "Jean-Baptiste"
meet the same placeholder. Matching those known names in any text is a dictionary lookup, no model:
that is all the read path does with names.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from carnet.domain.pii.common_words import NOT_A_NAME, all_common
from carnet.domain.pii.normalise import normalise
from carnet.domain.pii.spans import PERSON, Span, settle

PLACEHOLDER = re.compile(r"<([A-Z][A-Z0-9_]*)_(\d+)>")
_PARTICLES = frozenset({"de", "du", "des", "d", "le", "la", "van", "von", "ben", "et"})
_TITLES = frozenset({"m", "mme", "mlle", "mr", "mrs", "ms", "monsieur", "madame", "mademoiselle", "maitre", "me",
                     "dr", "docteur", "pr"})
_MIN_PART = 3  # name parts shorter than this are not matched alone


def fold(value: str) -> str:
    """Case, accents and spacing do not make another value."""
    decomposed = unicodedata.normalize("NFKD", value)
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return re.sub(r"[\s\u00a0.\-'’]+", " ", stripped).strip().casefold()


def _key(kind: str, value: str) -> str:
    if kind == PERSON:
        return f"{kind}:{fold(value)}"
    return f"{kind}:{re.sub(r'[^0-9a-z@.+_]', '', fold(value))}"


@dataclass(slots=True)
class PseudonymMap:
    """value key → placeholder, and per-kind counters. ``changed`` says whether it must be stored."""

    entries: dict[str, str] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)
    changed: bool = False
    version: int = 0  # the stored version it was loaded from (0: never stored)

    def placeholder(self, kind: str, value: str, *, create: bool = True) -> str:
        """The value's placeholder; a new one if it is new and ``create``, else the bare ``<KIND>``
        (a query must not add to the map)."""
        key = _key(kind, value)
        found = self.entries.get(key)
        if found is not None:
            return found
        if not create:
            return f"<{kind}>"
        n = self.counters.get(kind, 0) + 1
        self.counters[kind] = n
        made = f"<{kind}_{n}>"
        self.entries[key] = made
        if kind == PERSON:
            for part in _name_parts(value):
                self.entries.setdefault(_key(PERSON, part), made)
        self.changed = True
        return made

    def known_names(self) -> list[str]:
        """Folded names (and name parts) of the subject, longest first; none made only of words that
        never make a name (``common_words``: a map written before that list still holds "votre")."""
        names = [k.split(":", 1)[1] for k in self.entries if k.startswith(PERSON + ":")]
        names = [n for n in names if not all_common(n.split())]
        return sorted(names, key=len, reverse=True)

    def to_bytes(self) -> bytes:
        return json.dumps({"v": 1, "entries": self.entries, "counters": self.counters}, sort_keys=True).encode()

    @classmethod
    def from_bytes(cls, raw: bytes, *, version: int = 0) -> PseudonymMap:
        doc = json.loads(raw)
        if doc.get("v") != 1:
            raise ValueError("unknown pseudonym map version")
        return cls(dict(doc["entries"]), {k: int(v) for k, v in doc["counters"].items()}, version=version)

    def copy(self) -> PseudonymMap:
        return PseudonymMap(dict(self.entries), dict(self.counters), self.changed, self.version)


def _name_parts(name: str) -> list[str]:
    words = [w for w in re.split(r"[\s\u00a0]+", name) if w]
    parts = [w for w in words if fold(w) not in _PARTICLES and fold(w) not in _TITLES and len(fold(w)) >= _MIN_PART
             and fold(w) not in NOT_A_NAME]
    return parts if len(parts) > 1 else []


def find_known_names(text: str, pmap: PseudonymMap, is_word: Callable[[str], bool] = lambda _: False) -> list[Span]:
    """Spans of ``text`` that are names the map already knows: a dictionary match on folded words
    (case and accents ignored), whole words only. A one-word name (or part: "Plus" of "Séniors Plus",
    a surname such as "Boulanger") is not looked for where the text writes it in lower case as a word of
    the language (``is_word``) and no title comes before it: "ne … plus", "le boulanger du quartier",
    but "m. boulanger"."""
    names = pmap.known_names()
    if not names:
        return []
    view = normalise(text)  # zero-width characters and fullwidth letters do not hide a known name
    folded, offsets = _fold_with_offsets(view.text)
    spans = []
    for name in names:
        for m in re.finditer(rf"(?<!\w){re.escape(name)}(?!\w)", folded):
            a, b = offsets[m.start()], offsets[m.end() - 1] + 1
            written = view.text[a:b]
            if " " not in name and written.islower() and is_word(written) and not _after_title(view.text, a):
                continue
            spans.append(view.back(Span(a, b, PERSON, 0.9)))
    return spans


def _after_title(text: str, at: int) -> bool:
    """A title right before ``at``: "m. boulanger" is the surname even in lower case."""
    m = re.search(r"(\w+)\.?\s+$", text[max(0, at - 20) : at])
    return m is not None and fold(m.group(1)) in _TITLES


def _fold_with_offsets(text: str) -> tuple[str, list[int]]:
    """``fold`` of ``text`` character by character, with the original index of each folded character
    (separators collapse to one space, so names match across spacing)."""
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        if ch.isspace() or ch in _SEPARATORS:
            if not out or out[-1] != " ":
                out.append(" ")
                where.append(i)
            continue
        for c in _fold_char(ch):
            out.append(c)
            where.append(i)
    return "".join(out), where


_SEPARATORS = frozenset(".-'’\u00a0")


def _fold_char(ch: str) -> str:
    if ch.isascii():
        return ch.lower()
    return "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c)).casefold()


@dataclass(frozen=True, slots=True)
class Pseudonymized:
    text: str  # the pseudo_text
    found: tuple[tuple[str, str], ...]  # (kind, original value) of each span replaced


def pseudonymize(text: str, spans: Sequence[Span], pmap: PseudonymMap, *, known: Iterable[Span] = (),
                 create: bool = True) -> Pseudonymized:
    """Replace each span (and each known name) by the subject's placeholder for its value; with
    ``create=False`` (queries) the map is only read."""
    chosen = settle([*spans, *known])
    parts: list[str] = []
    found: list[tuple[str, str]] = []
    last = 0
    for s in chosen:
        value = s.text(text)
        parts.append(text[last : s.start])
        parts.append(pmap.placeholder(s.kind, value, create=create))
        found.append((s.kind, value))
        last = s.end
    parts.append(text[last:])
    return Pseudonymized("".join(parts), tuple(found))
