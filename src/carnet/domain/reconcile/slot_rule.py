"""What a row of the slot table is: a ``SlotRule`` (patterns, the kind of value, how it is qualified).

The table itself is ``carnet.domain.reconcile.slot_rules``; ``carnet.domain.reconcile.slots`` reads
notes with it. ``rx`` and ``enums`` are the two helpers the table is written with.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

Pattern = re.Pattern[str]


class ValueKind(StrEnum):
    NUMBER = "number"  # amounts, counts, coefficients: compared as canonical numbers
    DATE = "date"  # day-month, from "12 avril" or "12/04"
    CODE = "code"  # phone, email, IBAN: compact, exact
    ENUM = "enum"  # a closed set of values (marital status, payment means…)
    NAME = "name"  # free words: places, employers, vehicles (compared as word sets)


@dataclass(frozen=True, slots=True)
class SlotRule:
    slot: str
    patterns: tuple[Pattern, ...]
    kind: ValueKind
    exclusive: bool = True  # one value at a time (an address) vs several (cars)
    polar: bool = False  # negation before the value flips it ("ne travaille plus chez…")
    per_person: bool = True  # "son épouse travaille chez…" is the spouse's fact, not the member's
    negative_patterns: tuple[Pattern, ...] = ()  # patterns that always state a negative ("a quitté X")
    negative_words: Pattern | None = None  # extra negative cues for this slot ("vendu", "annulé")
    negative_in_text: bool = False  # look for negative_words in the whole note, not just the clause
    context: Pattern | None = None  # the note must contain this for the rule to apply
    prefix_requires: Pattern | None = None  # the clause before the value must contain this
    boundary: Pattern | None = None  # clause boundaries for this slot (default: ``BOUNDARY``)
    qualify: Callable[[str, int], str] | None = None  # (folded note, value start) -> qualifier
    enum: tuple[tuple[Pattern, str], ...] | None = None  # raw value -> canonical value
    canonical: Callable[[tuple[str, ...]], tuple[str, ...]] | None = None
    max_words: int = 8
    wildcard: bool = True  # an unqualified value ("*") matches any qualifier; False: only "*"


RAW = ""  # enum value meaning "keep the matched words as they are"


def rx(pattern: str) -> Pattern:
    return re.compile(pattern)


def enums(*pairs: tuple[str, str]) -> tuple[tuple[Pattern, str], ...]:
    """(raw-value pattern, canonical value) pairs, compiled: the first pattern that matches names the value."""
    return tuple((rx(p), v) for p, v in pairs)
