"""Which extracted records stand for a scenario fact, when the story is told as ``calls``.

A file with per-subject ``calls`` (fr-dev-2) says the history as raw transcripts; its checks
(``not_old``, ``superseded``) still name *facts* by index. A fact is said in the call that was
under way (or last ended) at the fact's ``at``, but not in one message one can point to: several
facts share a message, a fact is often said over three turns (question, answer, read-back), and
the advisor's summary may come minutes later. So a fact's records are found by what they say: the
records extracted from that call whose content words overlap the fact's the most (at least two
shared words, and at least half of the best overlap). Values are compared in clear (the records'
text is restored), so "23 rue du Logelbach" in a fact finds the record that carries the address.

This is a measuring convention of the bench, not something the extractor knows: it is documented
in docs/benchmarks.md, and a record matched to a fact it does not state only makes the check
stricter for ``not_old`` (one more record that must not come back).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from carnet.domain.text import content_tokens

_MIN_SHARED = 2
_OF_BEST = 0.5


def call_of(calls: Sequence[dict[str, Any]], at: datetime) -> int:
    """Index of the call under way at ``at``, or of the last one started before it (0 if none)."""
    found = 0
    for n, call in enumerate(calls):
        if _when(call["at"]) <= at:
            found = n
    return found


def fact_records(sdata: dict[str, Any], by_call: Sequence[set[str]], texts: Mapping[str, str]) -> list[set[str]]:
    """For each of the subject's facts, the ids of the records (of its call) that state it."""
    out = []
    for fact in sdata["facts"]:
        n = call_of(sdata["calls"], _when(fact["at"]))
        out.append(best_matches(fact["text"], {mid: texts[mid] for mid in by_call[n] if mid in texts}))
    return out


def best_matches(fact: str, candidates: Mapping[str, str]) -> set[str]:
    """Ids of the candidates sharing the most content words with ``fact`` (see the module doc)."""
    words = content_tokens(fact)
    shared = {mid: len(words & content_tokens(text)) for mid, text in candidates.items()}
    best = max(shared.values(), default=0)
    if best < _MIN_SHARED:
        return set()
    return {mid for mid, n in shared.items() if n >= max(_MIN_SHARED, _OF_BEST * best)}


def _when(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
