"""Reconcile a new memory against the subject's active ones (DESIGN.md, write path step 4). Pure.

Given the new candidate and the subject's top-N active records with their cosine to it, decide:

- ``UNCHANGED``: a replay of the same write (same deterministic id), or the exact same text
  with no new provenance. Nothing is written; nothing is reinforced twice.
- ``MERGE`` into a record: a near-duplicate. The service reinforces the target.
- ``SUPERSEDE`` records: a contradiction. The service creates the new record and closes the
  old ones (``valid_to``, ``superseded_by``); nothing is averaged or kept side by side.
- ``CREATE``: anything else.

Rules, in order (the first that fires decides):

1. replay, then exact duplicate;
2. **slot/value** (``carnet.domain.reconcile.slots``): same slot, different value → SUPERSEDE; same slot,
   same value, and nothing else new in the note → MERGE. It runs before the similarity tests
   because "budget max 600 €" and "budget max 750 €" are near-identical to an embedding;
3. **dedup**: a fact whose content words are all in a fact record (a part of it said again) → MERGE;
   Jaccard ≥ ``jaccard_dup`` or cosine ≥ ``cosine_dup`` → MERGE, unless a guard says the
   two notes carry different facts: different numbers or dates, one negated and not the other,
   or different values of a multi-valued slot (a second car). A wrong merge loses a fact;
4. **contradiction band**: cosine ≥ ``band_low``, a change marker in the new note ("désormais",
   "n'est plus", "moved"…) or a flipped negation, and a shared subject (slot or content word)
   → SUPERSEDE.

Slot and band rules only supersede ``fact`` records: an episode summary is an event, it is never
"no longer true" (the merge guards still apply to it). Only candidates of the same kind count.

``Decision.reason`` explains the outcome with slot names and scores only, never values: it
lands in record history and API responses, which must not carry plaintext.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum

from carnet.domain.reconcile.slot_cues import CHANGE_MARKERS, NEGATION
from carnet.domain.reconcile.slots import Comparison, Reading, Relation, compare, is_negated, read, uncovered
from carnet.domain.reconcile.topics import TopicReading, bridged, may_close, read_topics, supersedes
from carnet.domain.records import Kind, Memory, Source, Status
from carnet.domain.text import content_terms, content_tokens, exact_key, jaccard


class Action(StrEnum):
    CREATE = "create"
    MERGE = "merge"
    SUPERSEDE = "supersede"
    UNCHANGED = "unchanged"


class Rule(StrEnum):
    NO_MATCH = "no_match"
    REPLAY = "replay"
    EXACT = "exact"
    SLOT = "slot"
    TOPIC = "topic"
    SUBSUMED = "subsumed"
    JACCARD = "jaccard"
    COSINE = "cosine"
    BAND = "contradiction_band"


@dataclass(frozen=True, slots=True)
class ReconcileThresholds:
    """Similarity thresholds; the defaults are DESIGN's, the real values come from calibration.

    ``calibrated`` is False when no calibration exists for the embedding model in use: the
    defaults assume another embedder and callers should say so (readiness, logs).
    """

    jaccard_dup: float = 0.6
    cosine_dup: float = 0.92
    band_low: float = 0.75
    calibrated: bool = False
    model_id: str | None = None

    def __post_init__(self) -> None:
        if not 0.0 < self.jaccard_dup <= 1.0:
            raise ValueError("jaccard_dup must be in (0, 1]")
        if not -1.0 <= self.band_low <= self.cosine_dup <= 1.0:
            raise ValueError("thresholds must satisfy -1 <= band_low <= cosine_dup <= 1")

    @classmethod
    def from_mapping(cls, data: Mapping[str, object], *, model_id: str | None = None) -> ReconcileThresholds:
        """Read a calibration file's ``thresholds`` object (unknown keys are ignored)."""
        defaults = cls()
        return cls(
            jaccard_dup=_number(data, "jaccard_dup", defaults.jaccard_dup),
            cosine_dup=_number(data, "cosine_dup", defaults.cosine_dup),
            band_low=_number(data, "band_low", defaults.band_low),
            calibrated=True,
            model_id=model_id,
        )

    def to_mapping(self) -> dict[str, float]:
        return {"jaccard_dup": self.jaccard_dup, "cosine_dup": self.cosine_dup, "band_low": self.band_low}


def _number(data: Mapping[str, object], key: str, default: float) -> float:
    value = data.get(key, default)
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise ValueError(f"calibration value {key!r} must be a number")
    return float(value)


@dataclass(frozen=True, slots=True)
class Incoming:
    """The new candidate: clear ``text`` (slot values) and ``pseudo_text`` (what was embedded)."""

    text: str
    pseudo_text: str
    kind: Kind = Kind.FACT
    id: str | None = None  # the deterministic point id, to recognise a replay
    sources: tuple[Source, ...] = ()
    valid_from: datetime | None = None  # when it became true: an older record is never closed by it


@dataclass(frozen=True, slots=True)
class Decision:
    """What to do with the new candidate, and why.

    ``target``: the record to reinforce (MERGE) or that already holds it (UNCHANGED).
    ``superseded``: records the new fact makes untrue. With SUPERSEDE the service creates the new
    record and closes these; with MERGE (rare: the fact is already known, and other records still
    contradict it) it closes these in favour of ``target``.
    """

    action: Action
    rule: Rule
    reason: str
    target: str | None = None
    superseded: tuple[str, ...] = ()
    slots: tuple[str, ...] = ()
    score: float | None = None


@dataclass(frozen=True, slots=True)
class _Seen:
    """A candidate (or the incoming note) read once: every rule reuses these."""

    id: str
    cosine: float
    reading: Reading
    tokens: frozenset[str]
    numbers: frozenset[str]
    negated: bool
    topics: TopicReading
    bag: Counter[str]
    valid_from: datetime | None = None


@dataclass(frozen=True, slots=True)
class _Read:
    reading: Reading
    tokens: frozenset[str]
    numbers: frozenset[str]
    negated: bool
    exact: str
    topics: TopicReading
    bag: Counter[str]


Memo = MutableMapping[tuple[str, str], _Read]


def _read(text: str, pseudo_text: str, memo: Memo | None) -> _Read:
    key = (text, pseudo_text)
    if memo is not None and key in memo:
        return memo[key]
    terms = content_terms(pseudo_text)
    tokens = frozenset(terms)
    reading = read(text)
    out = _Read(reading, tokens, frozenset(t for t in tokens if any(ch.isdigit() for ch in t)),
                is_negated(reading.folded), exact_key(text), read_topics(text), Counter(terms))
    if memo is not None:
        memo[key] = out
    return out


def _see(id_: str, cosine: float, text: str, pseudo_text: str, memo: Memo | None = None,
         valid_from: datetime | None = None) -> _Seen:
    r = _read(text, pseudo_text, memo)
    return _Seen(id=id_, cosine=cosine, reading=r.reading, tokens=r.tokens, numbers=r.numbers,
                 negated=r.negated, topics=r.topics, bag=r.bag, valid_from=valid_from)


def decide(
    new: Incoming | str,
    candidates: Sequence[tuple[Memory, float]],
    thresholds: ReconcileThresholds,
    *,
    memo: Memo | None = None,
) -> Decision:
    """Decide CREATE / MERGE / SUPERSEDE / UNCHANGED for ``new`` (see the module doc).

    ``memo``: a dict the caller keeps for one batch, so a record read for one write is not read
    again for the next (a subject's neighbours recur). It holds plaintext readings: scope it to a
    request, never to the process.

    ``candidates`` are the subject's nearest records with the cosine between their embedding and
    the new one's. A plain string is a note whose ``pseudo_text`` is its text and whose kind is the
    candidates' (for callers that already searched one kind); pass an ``Incoming`` to be explicit.
    """
    incoming = new if isinstance(new, Incoming) else _incoming(new, candidates)
    pool = [(m, c) for m, c in candidates if m.kind is incoming.kind and m.status is Status.ACTIVE]
    if not pool:
        return Decision(Action.CREATE, Rule.NO_MATCH, "no active record of this kind to compare with")
    early = _replay_or_exact(incoming, pool, memo)
    if early is not None:
        return early
    seen_new = _see(incoming.id or "", 1.0, incoming.text, incoming.pseudo_text, memo, incoming.valid_from)
    seen = [_see(m.id, c, m.text, m.pseudo_text, memo, m.valid_from) for m, c in pool]
    judged = incoming.kind is Kind.FACT  # episodes and procedures are never "no longer true"
    relations = {s.id: compare(s.reading, seen_new.reading) for s in seen}
    decision = _by_slot(seen_new, seen, relations) if judged else None
    if judged and (decision is None or decision.action is Action.SUPERSEDE):
        decision = _by_topic(seen_new, seen, decision)
    if decision is None:
        decision = _by_similarity(seen_new, seen, relations, thresholds, incoming.kind)
    if decision is None and judged:
        decision = _by_band(seen_new, seen, relations, thresholds)
    return decision or _create(relations)


def _incoming(text: str, candidates: Sequence[tuple[Memory, float]]) -> Incoming:
    kind = candidates[0][0].kind if candidates else Kind.FACT
    return Incoming(text=text, pseudo_text=text, kind=kind)


def _replay_or_exact(incoming: Incoming, pool: Sequence[tuple[Memory, float]], memo: Memo | None) -> Decision | None:
    for memory, _ in pool:
        if incoming.id is not None and memory.id == incoming.id:
            return Decision(Action.UNCHANGED, Rule.REPLAY, "same record id: a replayed write", target=memory.id)
    new_key = _read(incoming.text, incoming.pseudo_text, memo).exact
    for memory, cosine in pool:
        if _read(memory.text, memory.pseudo_text, memo).exact != new_key:
            continue
        if set(incoming.sources) <= set(memory.sources):
            return Decision(Action.UNCHANGED, Rule.EXACT, "exact duplicate, no new source", target=memory.id)
        return Decision(Action.MERGE, Rule.EXACT, "exact duplicate from a new source", target=memory.id,
                        score=cosine)  # fmt: skip
    return None


def _by_slot(new: _Seen, seen: Sequence[_Seen], relations: Mapping[str, Comparison]) -> Decision | None:
    conflicts = [s for s in seen if relations[s.id].relation is Relation.CONFLICT
                 and _may_close(new, s, per_person=bool(_CONTACT_SLOTS.intersection(relations[s.id].slots)))]
    superseded = tuple(s.id for s in conflicts)
    same = [s for s in seen if relations[s.id].relation is Relation.SAME and _adds_nothing(new, s)]
    if same:
        best = max(same, key=lambda s: s.cosine)
        slots = relations[best.id].slots
        return Decision(Action.MERGE, Rule.SLOT, f"same value for slot {', '.join(slots)}",
                        target=best.id, superseded=superseded, slots=slots, score=best.cosine)  # fmt: skip
    if conflicts:
        slots = tuple(dict.fromkeys(slot for s in conflicts for slot in relations[s.id].slots))
        return Decision(Action.SUPERSEDE, Rule.SLOT, f"new value for slot {', '.join(slots)}",
                        superseded=superseded, slots=slots, score=max(s.cosine for s in conflicts))  # fmt: skip
    return None


def _by_topic(new: _Seen, seen: Sequence[_Seen], decision: Decision | None) -> Decision | None:
    """Records the newer note makes untrue by topic (``carnet.domain.reconcile.topics``), added to what the slot
    rule found. A record the note is older than is never closed by it (a late write of an old fact)."""
    topics = bridged(new.topics, (s.topics for s in seen))  # "le dossier grêle est clos": which file
    hits = [(s, name) for s in seen if not _newer(s, new) and (name := supersedes(topics, s.topics))]
    if not hits:
        return decision
    names = tuple(dict.fromkeys(name for _, name in hits))
    if decision is None:
        return Decision(Action.SUPERSEDE, Rule.TOPIC, f"newer statement on topic {', '.join(names)}",
                        superseded=tuple(s.id for s, _ in hits), slots=names,
                        score=max(s.cosine for s, _ in hits))  # fmt: skip
    superseded = tuple(dict.fromkeys([*decision.superseded, *(s.id for s, _ in hits)]))
    return replace(decision, superseded=superseded, reason=f"{decision.reason}; topic {', '.join(names)}")


# Slots whose value a note may give for someone else than the member, anywhere in it ("joindre la
# curatrice au …"): the slot table only reads a holder at the start of a note.
_CONTACT_SLOTS = frozenset({"phone", "email", "iban", "bank"})


def _may_close(new: _Seen, old: _Seen, *, per_person: bool) -> bool:
    return not _newer(old, new) and may_close(new.topics, old.topics, per_person=per_person)


def _newer(old: _Seen, new: _Seen) -> bool:
    return old.valid_from is not None and new.valid_from is not None and old.valid_from > new.valid_from


def _adds_nothing(new: _Seen, old: _Seen) -> bool:
    """Merging drops the new note's wording: allow it only when the note says nothing more.

    Every slot and number of the new note is known to the old one, and at most one content
    word outside the slot phrases is new (a paraphrase: "réside" for "habite", "together").
    """
    if not new.reading.slots <= old.reading.slots or not new.numbers <= old.numbers:
        return False
    rest = content_tokens(uncovered(new.reading), cache=False)  # clear text: no stem cache
    known = content_tokens(old.reading.folded, cache=False)
    return len(rest - known) <= 1


def _by_similarity(
    new: _Seen, seen: Sequence[_Seen], relations: Mapping[str, Comparison], t: ReconcileThresholds,
    kind: Kind = Kind.FACT,
) -> Decision | None:
    best: tuple[float, float, _Seen] | None = None
    within = [s for s in seen if _subsumed(new, s, relations)] if kind is Kind.FACT else []
    if within:
        s = max(within, key=lambda s: s.cosine)
        return Decision(Action.MERGE, Rule.SUBSUMED, "every content word of the note is in the record",
                        target=s.id, score=s.cosine)  # fmt: skip
    for s in seen:
        if not _may_merge(new, s, relations):
            continue
        j = jaccard(new.tokens, s.tokens)
        if (j >= t.jaccard_dup or s.cosine >= t.cosine_dup) and (best is None or s.cosine > best[1]):
            best = (j, s.cosine, s)
    if best is None:
        return None
    j, cosine, s = best
    if j >= t.jaccard_dup:
        return Decision(Action.MERGE, Rule.JACCARD, f"jaccard {j:.2f} >= {t.jaccard_dup:.2f}",
                        target=s.id, score=j)  # fmt: skip
    return Decision(Action.MERGE, Rule.COSINE, f"cosine {cosine:.3f} >= {t.cosine_dup:.3f}",
                    target=s.id, score=cosine)  # fmt: skip


def _subsumed(new: _Seen, old: _Seen, relations: Mapping[str, Comparison]) -> bool:
    """The note repeats part of the record and adds nothing: "SIN-2025-071228." after "Le conseiller
    déclare le sinistre incendie, numéro SIN-2025-071228.", "3 760 euros." after "un prix de 3 760
    euros". Every word as many times at least (the record "numéro 12 du membre 1" does not hold "numéro 1
    du membre 1"), same polarity, and no slot the record does not have."""
    relation = relations.get(old.id)
    if relation is not None and relation.relation in (Relation.DISTINCT, Relation.CONFLICT):
        return False
    return (bool(new.tokens) and new.tokens < old.tokens and new.bag <= old.bag and new.negated == old.negated
            and new.reading.slots <= old.reading.slots)


def _may_merge(new: _Seen, old: _Seen, relations: Mapping[str, Comparison]) -> bool:
    """Guards: similar wording with different numbers, polarity or values is another fact."""
    relation = relations.get(old.id)
    if relation is not None and relation.relation in (Relation.DISTINCT, Relation.CONFLICT):
        return False
    return new.numbers == old.numbers and new.negated == old.negated


def _by_band(
    new: _Seen, seen: Sequence[_Seen], relations: Mapping[str, Comparison], t: ReconcileThresholds
) -> Decision | None:
    """Candidates at or above ``cosine_dup`` that a guard kept from merging are judged here too."""
    hits = [s for s in seen
            if s.cosine >= t.band_low and _contradicts(new, s, relations[s.id]) and _may_close(new, s, per_person=True)]
    if not hits:
        return None
    top = max(s.cosine for s in hits)
    return Decision(Action.SUPERSEDE, Rule.BAND, f"cosine {top:.3f} >= {t.band_low:.3f} with a change marker",
                    superseded=tuple(s.id for s in hits), score=top)  # fmt: skip


def _contradicts(new: _Seen, old: _Seen, relation: Comparison) -> bool:
    if relation.relation in (Relation.DISTINCT, Relation.SAME):
        return False  # another car is not a contradiction; neither is restating the same value
    if not (new.reading.changed or new.negated != old.negated):
        return False
    shared_slot = bool(new.reading.slots & old.reading.slots)
    shared_word = any(not any(ch.isdigit() for ch in tok) for tok in _changed_words(new) & old.tokens)
    return shared_slot or shared_word


def _changed_words(new: _Seen) -> frozenset[str]:
    """The content words of the clauses that carry the change or the negation: "plus aucun démarchage,
    ni par téléphone" changes the canvassing, not what the member's other notes say of the phone."""
    clauses = [c for c in _CLAUSE.findall(new.reading.folded) if CHANGE_MARKERS.search(c) or NEGATION.search(c)]
    return content_tokens(" ".join(clauses), cache=False) if clauses else new.tokens


_CLAUSE = re.compile(r"[^,;:.!?()]+")


def _create(relations: Mapping[str, Comparison]) -> Decision:
    distinct = tuple(dict.fromkeys(s for r in relations.values() if r.relation is Relation.DISTINCT for s in r.slots))
    if distinct:
        return Decision(Action.CREATE, Rule.SLOT, f"a distinct fact for slot {', '.join(distinct)}",
                        slots=distinct)  # fmt: skip
    return Decision(Action.CREATE, Rule.NO_MATCH, "no duplicate or contradiction found")
