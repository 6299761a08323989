"""Slots: what a fact is *about* (address, budget, employer…) and the value it gives. Pure.

Reconcile runs this rule before any similarity test because embeddings cannot tell
"budget max 600 €" from "budget max 750 €" (cosine ≈ 0.97 with multilingual-e5): only the
value differs, and the value is the fact. So each note is read into ``SlotFact`` s —
(slot, qualifier, holder, value, polarity) — by a small declarative table of French and
English patterns (``carnet.domain.reconcile.slot_rules``), and two notes are compared fact by fact.

- ``qualifier`` keeps apart facts of one slot about different things: the franchise of the
  *auto* contract and the franchise of the *home* contract; a mobile and a landline number.
  ``*`` (not said) matches any qualifier, except for slots that are per contract by nature
  (premium, franchise, cover, payment): there "cotisation de 620 €" says nothing of the moto's.
- ``holder`` keeps apart the member's facts from their relatives': "son épouse travaille
  chez Thales" does not contradict "travaille chez Airbus".
- ``positive`` is False for "ne travaille plus chez Airbus", "a vendu sa Clio", "rendez-vous
  annulé": same value, opposite polarity is a contradiction.
- ``exclusive`` slots hold one value at a time (an address); others may hold several (cars,
  appointments) and only contradict when the new note says something changed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum

from carnet.domain.reconcile.slot_cues import BOUNDARY, CHANGE_MARKERS, FRAME_WORDS, HOLDER, HOLDERS, NEGATION
from carnet.domain.reconcile.slot_rule import RAW, SlotRule, ValueKind
from carnet.domain.reconcile.slot_rules import RULES
from carnet.domain.text import ENGLISH_STOPWORDS, FRENCH_STOPWORDS, fold, tokenize

_PLACE_NOISE = frozenset({"arrondissement", "arr", "ville", "commune", "centre", "centre-ville"})
_STOP = FRENCH_STOPWORDS | ENGLISH_STOPWORDS | {"a"}
# Counts that the tokenizer leaves as words (they are articles more often than numbers).
_COUNT_WORDS = {
    **dict.fromkeys(("un", "une", "one"), "1"),
    **dict.fromkeys(("no", "aucun", "aucune", "sans", "pas", "childless"), "0"),
}


@dataclass(frozen=True, slots=True)
class SlotFact:
    """One (slot, value) read from a note. ``span`` is a range of the note's ``fold`` form."""

    slot: str
    qualifier: str
    holder: str
    value: tuple[str, ...]
    positive: bool
    exclusive: bool
    span: tuple[int, int]
    wildcard: bool = True

    def same_key(self, other: SlotFact) -> bool:
        """Same slot, same holder, same qualifier ("*" matches any where the slot allows it)."""
        if self.slot != other.slot or self.holder != other.holder:
            return False
        if self.qualifier == other.qualifier:
            return True
        return self.wildcard and other.wildcard and "*" in (self.qualifier, other.qualifier)


class Relation(IntEnum):
    """How a new note relates to a stored one, slot-wise. Higher wins when facts disagree."""

    NONE = 0  # no shared slot, or nothing comparable
    COMPATIBLE = 1  # a value refines the other ("Lyon" / "5 place Bellecour, 69002 Lyon")
    SAME = 2  # every shared slot has the same value
    DISTINCT = 3  # different facts of one slot (another car, the spouse's job): both stay, never merge
    CONFLICT = 4  # different value of a one-value slot, or the same value negated


@dataclass(frozen=True, slots=True)
class Reading:
    """A note read once: its folded form, slot facts and cues, reused for every comparison."""

    folded: str
    facts: tuple[SlotFact, ...]
    changed: bool  # the note says something changed ("désormais", "n'est plus", "moved"…)

    @property
    def slots(self) -> frozenset[str]:
        return frozenset(f.slot for f in self.facts)


def read(text: str) -> Reading:
    folded = fold(text)
    return Reading(folded=folded, facts=tuple(extract(folded)), changed=has_change_marker(folded))


def has_change_marker(folded: str) -> bool:
    return CHANGE_MARKERS.search(folded) is not None


def is_negated(folded: str) -> bool:
    """The note as a whole carries a negation ("ne … pas", "n'est plus", "not", "refuse")."""
    return NEGATION.search(folded) is not None


# --- extraction ----------------------------------------------------------------------------


def extract(folded: str) -> list[SlotFact]:
    """Every slot fact the rule table finds in a folded note, in rule order."""
    holder = _holder(folded)
    facts: dict[tuple[object, ...], SlotFact] = {}
    for rule in RULES:
        if rule.context is not None and rule.context.search(folded) is None:
            continue
        for fact in _apply(rule, folded, holder):
            key = (fact.slot, fact.qualifier, fact.holder, frozenset(fact.value), fact.positive)
            facts.setdefault(key, fact)  # two patterns reading the same fact count once
    return list(facts.values())


def _holder(folded: str) -> str:
    m = HOLDER.match(folded)
    if m is None:
        return "self"
    word = m.group("h")
    return HOLDERS.get(word, word)


def _apply(rule: SlotRule, folded: str, holder: str) -> Iterable[SlotFact]:
    for pattern in rule.patterns:
        for m in pattern.finditer(folded):
            start = m.start("v")
            clause_start = _clause_start(folded, start, rule)
            prefix = folded[clause_start:start]
            if rule.prefix_requires is not None and rule.prefix_requires.search(prefix) is None:
                continue
            value = _value(rule, m.group("v"))
            if not value:
                continue
            # A value found through a note-wide context ("préfère … matinée") owns its clause.
            owns_clause = rule.prefix_requires is not None or rule.context is not None
            span_start = clause_start if owns_clause else m.start()
            yield SlotFact(
                slot=rule.slot,
                qualifier=rule.qualify(folded, start) if rule.qualify else "*",
                holder=holder if rule.per_person else "self",
                value=value,
                positive=_positive(rule, pattern, prefix, m, folded),
                exclusive=rule.exclusive,
                span=(span_start, m.end()),
                wildcard=rule.wildcard,
            )


def _clause_start(folded: str, pos: int, rule: SlotRule) -> int:
    """Where the clause holding ``pos`` starts: after the last punctuation or clause word."""
    start = 0
    boundary = rule.boundary or BOUNDARY
    for b in boundary.finditer(folded, 0, pos):
        start = b.end()
    return start


def _positive(rule: SlotRule, pattern: re.Pattern[str], prefix: str, m: re.Match[str], folded: str) -> bool:
    """False when the fact is stated negatively: "ne travaille plus chez", "a vendu sa", "annulé"."""
    if pattern in rule.negative_patterns:
        return False
    if not rule.polar:
        return True
    if NEGATION.search(prefix):
        return False
    words = rule.negative_words
    if words is None:
        return True
    scope = folded if rule.negative_in_text else prefix + m.group("v")
    return words.search(scope) is None


# --- values --------------------------------------------------------------------------------


def _value(rule: SlotRule, raw: str) -> tuple[str, ...]:
    """The canonical value: what two notes must share to say the same thing."""
    kind = rule.kind
    if kind is ValueKind.ENUM:
        return _enum(rule, raw)
    tokens = tokenize(raw)
    if kind is ValueKind.NUMBER:
        numbers = [_COUNT_WORDS.get(t, t) for t in tokens]
        numbers = [t for t in numbers if re.fullmatch(r"\d+(?:\.\d+)?", t)]
        return (numbers[0],) if numbers else ()
    if kind is ValueKind.DATE:
        dates = [t for t in tokens if re.fullmatch(r"\d{2}-\d{2}", t)]
        return (dates[0],) if dates else ()
    if kind is ValueKind.CODE:
        return (re.sub(r"[\s.-]", "", raw).lower(),) if "@" in raw else ("".join(tokens),)
    words = [t for t in tokens if t not in _STOP and t not in _PLACE_NOISE and "'" not in t]
    if rule.canonical is not None:
        words = list(rule.canonical(tuple(words)))
    return tuple(words[: rule.max_words])


def _enum(rule: SlotRule, raw: str) -> tuple[str, ...]:
    assert rule.enum is not None
    for pattern, canonical in rule.enum:
        if pattern.search(raw):
            return (canonical,) if canonical != RAW else (" ".join(raw.split()),)
    return ()


# --- comparison ----------------------------------------------------------------------------


class ValueMatch(IntEnum):
    DIFFERENT = 0
    COMPATIBLE = 1
    SAME = 2


def match_values(a: SlotFact, b: SlotFact) -> ValueMatch:
    """Word order does not matter ("Lyon 7e" = "7e arrondissement de Lyon"); a subset refines."""
    sa, sb = set(a.value), set(b.value)
    if sa == sb:
        return ValueMatch.SAME
    if a.slot in _REFINABLE and (sa <= sb or sb <= sa):
        return ValueMatch.COMPATIBLE
    return ValueMatch.DIFFERENT


_REFINABLE = frozenset({"residence", "employer", "profession", "vehicle"})


def relate_facts(old: SlotFact, new: SlotFact, *, changed: bool) -> Relation:
    """The relation of two facts of the same key (see ``SlotFact.same_key``)."""
    values = match_values(old, new)
    if values is not ValueMatch.DIFFERENT:
        if old.positive != new.positive:
            return Relation.CONFLICT
        return Relation.SAME if values is ValueMatch.SAME else Relation.COMPATIBLE
    if not (old.positive and new.positive):
        return Relation.NONE  # "a vendu sa Clio" says nothing about the Peugeot
    if old.exclusive or changed:
        return Relation.CONFLICT
    return Relation.DISTINCT


@dataclass(frozen=True, slots=True)
class Comparison:
    relation: Relation
    slots: tuple[str, ...]  # the slots that decided it (names only: never values)


def compare(old: Reading, new: Reading) -> Comparison:
    """The strongest relation over every pair of facts of one slot.

    Facts of one slot about different things (the spouse's employer, the home contract's
    franchise) are DISTINCT: never merged, never contradicting.
    """
    best = Relation.NONE
    slots: list[str] = []
    for o in old.facts:
        for n in new.facts:
            if o.slot != n.slot:
                continue
            relation = relate_facts(o, n, changed=new.changed) if o.same_key(n) else Relation.DISTINCT
            if relation > best:
                best, slots = relation, [n.slot]
            elif relation == best and relation is not Relation.NONE and n.slot not in slots:
                slots.append(n.slot)
    return Comparison(relation=best, slots=tuple(slots))


def uncovered(reading: Reading) -> str:
    """The note with its slot spans and frame words blanked out: what it says besides its slots."""
    chars = list(reading.folded)
    for fact in reading.facts:
        for i in range(*fact.span):
            chars[i] = " "
    return " ".join(w for w in "".join(chars).split() if w not in FRAME_WORDS)

