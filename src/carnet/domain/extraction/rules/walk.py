"""The token walk the French rewriting works on: a sentence as a list of tokens edited in place.

Tokens keep their spacing (whitespace tokens), so the sentence is rebuilt by joining them; an
edited token may become empty (a pronoun dropped) or carry several words ("le membre").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MEMBER, ADVISOR = "member", "advisor"
CALLER = "caller"  # someone calling for the member: a guardian, a relative (``proxy``)

TOKEN = re.compile(
    r"<[A-Z][A-Z0-9_]*_\d+>|(?:qu|jusqu|lorsqu|puisqu|[jmtslndc])['’](?=[\w<])|\w+(?:-\w+)*|\s+|.",
    re.IGNORECASE,
)


@dataclass(slots=True)
class Walk:
    tokens: list[str]
    speaker: str  # MEMBER or ADVISOR
    me: str = MEMBER  # who "je" is in the member's mouth: CALLER when someone calls for the member
    named: set[str] = field(default_factory=set)  # who already has their noun ("le membre")
    last_subject: str | None = None
    addressee: str = MEMBER  # who "vous" is in the advisor's mouth: CALLER when someone calls for the member

    @classmethod
    def of(cls, text: str, speaker: str, me: str = MEMBER, addressee: str = MEMBER) -> Walk:
        return cls(TOKEN.findall(text), speaker, me, addressee=addressee)

    @property
    def owner(self) -> str:
        """Whose thing "mon" (the member's side) or "votre" (the advisor's) names."""
        return self.me if self.speaker == MEMBER else self.addressee

    def text(self) -> str:
        return "".join(self.tokens)

    def words(self, start: int = 0) -> list[int]:
        """Indexes of the non-blank tokens from ``start``."""
        return [i for i in range(start, len(self.tokens)) if self.tokens[i] and not self.tokens[i].isspace()]

    def before(self, i: int) -> int | None:
        """Index of the word before ``i``."""
        for j in range(i - 1, -1, -1):
            if self.tokens[j] and not self.tokens[j].isspace():
                return j
        return None

    def low(self, i: int) -> str:
        return self.tokens[i].lower().replace("’", "'")

    def drop(self, i: int) -> None:
        """Blank token ``i`` and the space after it."""
        self.tokens[i] = ""
        if i + 1 < len(self.tokens) and self.tokens[i + 1].isspace():
            self.tokens[i + 1] = ""


OF = {MEMBER: "du membre", CALLER: "de l'appelant"}  # "le numéro du membre", "le père de l'appelant"
TO = {MEMBER: "au membre", CALLER: "à l'appelant", "household": "au foyer du membre",
      "company": "à l'établissement"}  # "envoie au membre"


def case(original: str, new: str) -> str:
    """``new`` with ``original``'s initial capital."""
    return new[:1].upper() + new[1:] if original[:1].isupper() else new
