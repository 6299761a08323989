"""A piece of personal data found in a text, and how overlapping findings are settled."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

PERSON = "PERSON"
IBAN = "IBAN"
NIR = "NIR"
PHONE = "PHONE"
EMAIL = "EMAIL"
CARD = "CARD"
PLATE = "PLATE"
ADDRESS = "ADDRESS"
BIRTHDATE = "BIRTHDATE"

# Exact identifiers: they get blind-index tokens, so a member's records can be found by them.
IDENTIFIERS = frozenset({IBAN, NIR, PHONE, EMAIL, CARD, PLATE})
BUILT_IN = (PERSON, IBAN, NIR, PHONE, EMAIL, CARD, PLATE, ADDRESS, BIRTHDATE)


@dataclass(frozen=True, slots=True)
class Span:
    start: int
    end: int
    kind: str
    score: float

    def text(self, source: str) -> str:
        return source[self.start : self.end]

    def overlaps(self, other: Span) -> bool:
        return self.start < other.end and other.start < self.end


def settle(spans: Iterable[Span], *, threshold: float = 0.0) -> list[Span]:
    """Spans of one type that overlap become one (their union, the best score: a name found whole by
    one rule and in part by another is the whole name). Then keep those at or above ``threshold``
    that do not overlap a better one (higher score, then longer), in text order."""
    kept: list[Span] = []
    for s in sorted((s for s in _merged(spans) if s.score >= threshold),
                    key=lambda s: (-s.score, -(s.end - s.start), s.start)):
        if not any(s.overlaps(k) for k in kept):
            kept.append(s)
    return sorted(kept, key=lambda s: s.start)


def _merged(spans: Iterable[Span]) -> list[Span]:
    out: list[Span] = []
    for s in sorted(spans, key=lambda s: (s.kind, s.start)):
        last = out[-1] if out else None
        if last is not None and last.kind == s.kind and s.start < last.end:
            out[-1] = Span(last.start, max(last.end, s.end), s.kind, max(last.score, s.score))
        else:
            out.append(s)
    return out
