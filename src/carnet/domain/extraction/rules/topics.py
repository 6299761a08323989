"""One record per topic in a call: records of one call that carry the same value are folded into one.

A topic told in pieces ("le prélèvement se fera sur <IBAN_1>" … "Le conseiller relit : <IBAN_1>."; "la
franchise est de 150 euros" … "150 euros, c'est ça") leaves several records of one call about one thing;
each alone answers less, and they compete for a top-k. Two records of one call that carry the same value (the
same reference: an IBAN, a phone, an address, a file number, as their placeholders say; or the same
amount) are about the same thing: the later is folded into the earlier, in order ("… ; …"), up to
``turns.MAX_CHARS``. A person's name is no topic (the member's or a relative's name runs through a
call), nor is a date (one day carries several topics). A value said anew (another amount, another
address) is another value: such records are never folded, so a change stays a record reconcile can
compare; so does a file's status ("le dossier … est clos", ``cases.is_status``): it stays a record of
its own, which a later status replaces. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from carnet.domain.extraction.model import ExtractedFact
from carnet.domain.extraction.rules import cases, turns
from carnet.domain.reconcile.evidence import read

_NO_TOPIC = frozenset({"person", "date"})  # kinds of value that do not make a topic
REFERENCE_CHARS = 6  # a number this long is a reference (a file, a contract: "CTS-2025-07741"), not a year or an hour


def values(text: str) -> frozenset[str]:
    """The values of ``text`` that name a topic: ``kind:value`` (placeholders other than names, amounts,
    references)."""
    return frozenset(f"{kind}:{v}" for kind, found in read(text).values if kind not in _NO_TOPIC for v in found
                     if kind != "number" or len(v) >= REFERENCE_CHARS)


def fold(facts: Sequence[ExtractedFact]) -> tuple[ExtractedFact, ...]:
    """``facts`` of one call, each folded into the first earlier one that shares a value with it."""
    groups: list[list[ExtractedFact]] = []
    held: list[frozenset[str]] = []
    for fact in facts:
        mine = frozenset() if cases.is_status(fact.text) else values(fact.text)
        into = next((g for g, seen in enumerate(held) if mine & seen and fact.kind is groups[g][0].kind
                     and len(turns.joined_text([*groups[g], fact])) <= turns.MAX_CHARS), None)
        if into is None:
            groups.append([fact])
            held.append(mine)
        else:
            groups[into].append(fact)
            held[into] = held[into] | mine
    return tuple(turns.merged(group) for group in groups)
