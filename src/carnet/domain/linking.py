"""Case identifiers link records: "dossier RC-2026-1184 accepté" answers a question about the claim
that "conteste … dossier RC-2026-1184" opened, though the two share no other word.

Call-center memories refer to claims, contracts and tickets by their reference. When the best match
of a query carries such a reference, the subject's other records carrying the same reference are
brought up right behind it (a bounded number of them), ordered by their own score.

Ranking compares references without reading any text: each record stores the blind-index tokens of
the references its text names (``Memory.blind_index``, computed at write time), so two records share
a reference exactly when they share a token, and sealed texts stay sealed until the few records
kept are revealed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from typing import TypeVar

T = TypeVar("T")

# Letters-dash-digits references (RC-2026-1184, TMP-55120, SIN-00042), digit groups joined by dashes
# (a Banque de France file, 057-2025-00841) and pseudonym placeholders (<CONTRACT_3>), which stand
# for the same identifier in every record of a subject.
_REFERENCE = re.compile(
    r"\b[A-Z]{2,}(?:-[A-Z0-9]+)*-\d[A-Z0-9]*(?:-[A-Z0-9]+)*\b|\b\d{2,}(?:-\d{2,}){2,}\b|<[A-Z_]+_\d+>"
)


def references(text: str) -> frozenset[str]:
    return frozenset(m.group(0) for m in _REFERENCE.finditer(text))


def linking_references(text: str, subject_id: str) -> frozenset[str]:
    """The references of ``text`` that link records, for its blind index: all but the subject's own
    id. A member number said in the calls ("Baudry, CLI-204417") is the subject of every record, not
    a file: linking by it brought a call's greeting up behind any answer that repeated it."""
    return references(text) - {subject_id}


def bring_linked_up(ranked: Sequence[T], refs_of: Callable[[T], Collection[str]], *, limit: int = 2) -> list[T]:
    """``ranked`` best first. Records sharing a reference with the first one move up behind it.

    ``refs_of`` gives a record's references, in any spelling that is equal for equal references (the
    references themselves, or their blind-index tokens)."""
    if len(ranked) < 2:
        return list(ranked)
    refs = set(refs_of(ranked[0]))
    if not refs:
        return list(ranked)
    linked = [r for r in ranked[1:] if refs.intersection(refs_of(r))][:limit]
    rest = [r for r in ranked[1:] if not any(r is x for x in linked)]
    return [ranked[0], *linked, *rest]
