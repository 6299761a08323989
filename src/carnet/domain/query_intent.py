"""What a question asks for, beyond its words: the current state. Pure, no I/O.

**current**: "aujourd'hui", "actuellement", "désormais", "encore", "où en est…", "currently": the
advisor wants the latest of several states (an address, a claim's status), so recency weighs more.
Read from the question as written by the advisor (its placeholders do not matter here).

An amount intent as keywords ("combien", "montant": add the currency token amounts carry to the keyword
query) was measured and dropped: it changed no answer on either French set (docs/benchmarks.md). What a
question asks for as a value (an amount, a date) is read by ``domain.answer_type`` instead, and lifts the
candidates whose text gives one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from carnet.domain.scoring import Weights
from carnet.domain.text import fold

# How much more recency weighs for a "current state" question (the default weight 0.10 becomes 0.30).
CURRENT_RECENCY_FACTOR = 3.0

_CURRENT = re.compile(
    r"\b(?:aujourd'hui|actuel(?:le)?(?:ment)?|en ce moment|maintenant|desormais|a present|dorenavant"
    r"|encore|toujours|dernier|derniere|recent(?:e|ement)?|ou en (?:est|sont)|a jour|au final"
    r"|currently|current|now|latest|still|these days|most recent)\b"
)


@dataclass(frozen=True, slots=True)
class Intent:
    current: bool = False

    def weights(self, base: Weights) -> Weights:
        """The ranking weights for this question: ``base`` with recency raised for a current-state one."""
        if not self.current:
            return base
        return replace(base, recency=base.recency * CURRENT_RECENCY_FACTOR)


def read_intent(question: str) -> Intent:
    text = fold(question)
    return Intent(current=bool(_CURRENT.search(text)))
