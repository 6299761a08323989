"""One record per turn: what a speaker says in one message is kept together.

People say one thing in several sentences: "J'ai mes appareils maintenant. Le 2 juin. J'ai pris les
classe 2, finalement. Il m'a fait un prix, 3 760 au lieu de 3 900." Kept sentence by sentence, the
price is a record that does not say of what, and four records compete for a top-k where one would
answer "combien ont coûté ses audioprothèses ?". So the facts read from one message of one speaker
are joined, in order, into one record ("…maintenant ; le 2 juin 2025 ; … 3 760 au lieu de 3 900."):

- a record stops growing at ``MAX_CHARS`` (a long dictated note goes into several);
- its category and importance are those of its most important part (a decision stays a decision),
  and it became true at the earliest date its parts give.

Measured on fr-dev-2's calls (docs/benchmarks.md): fewer records per call, less noise, more answers in
the top-3, fewer false supersessions. The cost: a later statement that supersedes a turn closes all of
it; a turn rarely mixes two states of the member.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import reduce

from carnet.domain.extraction.model import ExtractedFact
from carnet.domain.extraction.rules import fragments, repeats

MAX_CHARS = 400


def by_turn(facts: Sequence[ExtractedFact], turns: Sequence[int]) -> tuple[ExtractedFact, ...]:
    """``facts`` (``turns[i]``: the message fact ``i`` was read from) without repeats
    (``repeats``), each message's run of facts joined into one."""
    groups: list[list[ExtractedFact]] = []
    last: int | None = None
    for i in repeats.kept(facts):
        fact, turn = facts[i], turns[i]
        if groups and turn == last and len(_text(groups[-1] + [fact])) <= MAX_CHARS:
            groups[-1].append(fact)
        else:
            groups.append([fact])
        last = turn
    return tuple(_one(group) for group in groups)


def _text(group: Sequence[ExtractedFact]) -> str:
    return reduce(fragments.joined, (f.text for f in group[1:]), group[0].text)


def _one(group: Sequence[ExtractedFact]) -> ExtractedFact:
    if len(group) == 1:
        return group[0]
    lead = max(group, key=lambda f: f.importance)
    dates = [f.valid_from for f in group if f.valid_from is not None]
    return ExtractedFact(text=_text(group), category=lead.category, importance=lead.importance,
                         valid_from=min(dates) if dates else None, kind=lead.kind)  # fmt: skip
