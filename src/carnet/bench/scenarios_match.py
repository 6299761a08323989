"""Which scenario facts a stored record carries, by shared content words (``bench scenarios --from calls``).

Records extracted from calls are not the file's facts: they are rephrased, split or merged. A record
*carries* fact ``i`` when the content words they share hold at least ``CARRY_SHARE`` of the information
of one side (the record's or the fact's), information being the words' IDF over all facts of the file:

    coverage(r, f) = max(w(R ∩ F) / w(R), w(R ∩ F) / w(F)),   w(S) = Σ_{t ∈ S} ln((N + 1) / (df(t) + 1)) + 1

where ``N`` is the number of facts in the file and ``df(t)`` how many of them hold the word ``t``.
Words are casefolded, without accents, letters-only words of 3 letters or more (a final plural ``s`` or
``x`` dropped) or numbers (``212,40`` is one word), minus French function words. A record is mapped to
the facts of its subject with the highest coverage, if that coverage reaches ``CARRY_SHARE`` (ties: all
of them); a record mapped to none is unmapped.

Words frequent in the file ("contrat", "euros", "membre") weigh little, rare ones (a town, an amount,
a case reference) weigh much, so "Le conseiller note sa nouvelle adresse." shares only "nouvelle
adresse" with "Nouvelle adresse : 4 rue des Lilas, Colmar", less than half of the record's information
and a small share of the fact's: unmapped. The match is lexical: a record that says a fact in other
words ("Le membre entend un peu loin." for "parler lentement, en articulant") is unmapped too, so
``noise`` is an upper bound, and ``superseded_unmapped`` counts old facts that no record repeats.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

CARRY_SHARE = 0.5

_WORD = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+")
_STOP = frozenset(
    "les des une est sont aux pour par sur dans avec qui que quoi quand son ses leur leurs ils elles vous "
    "nous cette ces pas plus mais donc car tres tout tous toute toutes etre avoir ete ont fait elle lui mes "
    "mon nos notre votre vos ceci cela comme aussi bien oui non etait sera entre depuis chez sans sous apres "
    "avant deja encore alors ainsi dont ceux celle celui".split()
)


def words(text: str) -> frozenset[str]:
    """The content words of ``text`` (see the module's docstring)."""
    folded = "".join(c for c in unicodedata.normalize("NFKD", text.casefold()) if not unicodedata.combining(c))
    return frozenset(_singular(w) for w in _WORD.findall(folded) if (w[0].isdigit() or len(w) >= 3) and w not in _STOP)


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word[-1] in "sx" and not word[0].isdigit() else word


@dataclass(frozen=True, slots=True)
class Weights:
    """IDF of content words over a file's facts."""

    df: Mapping[str, int]
    facts: int

    @classmethod
    def of(cls, fact_texts: Iterable[str]) -> Weights:
        counts: Counter[str] = Counter()
        n = 0
        for text in fact_texts:
            counts.update(words(text))
            n += 1
        return cls(df=dict(counts), facts=n)

    def weight(self, ws: Iterable[str]) -> float:
        return sum(
            math.log((self.facts + 1) / (self.df.get(w, 0) + 1)) + 1 for w in sorted(ws)
        )  # one order: exact ties


def coverage(record: frozenset[str], fact: frozenset[str], weights: Weights) -> float:
    shared = weights.weight(record & fact)
    if shared == 0:
        return 0.0
    return max(shared / weights.weight(record), shared / weights.weight(fact))


def carried(record_text: str, facts: Sequence[str], weights: Weights) -> frozenset[int]:
    """Indexes of the ``facts`` (one subject's fact texts) that the record carries; empty when unmapped."""
    record = words(record_text)
    scores = [coverage(record, words(f), weights) for f in facts]
    best = max(scores, default=0.0)
    if best < CARRY_SHARE:
        return frozenset()
    return frozenset(i for i, s in enumerate(scores) if s == best)
