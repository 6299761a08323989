"""Reconcile a new memory against the subject's active ones (DESIGN.md, write path step 4). Pure.

Given the new candidate and the subject's nearest records with their cosine to it, decide:

- ``UNCHANGED``: a replay of the same write (same deterministic id), or the exact same text
  with no new provenance. Nothing is written; nothing is reinforced twice.
- ``MERGE`` into a record: a near-duplicate. The service reinforces the target.
- ``SUPERSEDE`` a record: the newer note makes it untrue. The service creates the new record and
  closes the old one (``valid_to``, ``superseded_by``); nothing is averaged or kept side by side.
- ``CREATE``: anything else; with ``superseded_by`` set when the note arrived late and a newer
  record already says what is true now (time order, not arrival order).

In order (the first that fires decides):

1. replay, then exact duplicate;
2. **dedup**: a fact whose content words are all in a fact record (a part of it said again) → MERGE;
   Jaccard ≥ ``jaccard_dup`` or cosine ≥ ``cosine_dup`` → MERGE, unless the two carry different
   numbers or one is negated and not the other (then they are two facts: a wrong merge loses one);
3. **the learned judge** (``judge_model``, facts only): each candidate's evidence
   (``evidence.FEATURES``) scored; the most probable at or above ``close_at`` is closed by the note, or,
   when that record is newer than the note, closes the note. Two notes of the same instant (one
   batch written at once) are never judged against each other: neither is newer (none of the 179
   labelled supersessions of the seven writers' files has its two notes at the same instant).
   Candidates in ``[ask_from, close_at)`` are ``uncertain``: the service asks an LLM about them when
   one is configured; a record newer than the note in that band is ``uncertain_newer`` (the LLM is
   asked whether it makes the late note untrue). Until an LLM answers, or when none does, the most
   probable of them that the judge ``contests`` is ranked after the newer note (``contest``,
   ``contest_newer``: ``domain.contested``).

Episodes and procedures are never "no longer true": only facts are judged.

``Decision.reason`` explains the outcome with rule names and scores only, never values: it lands in
record history and API responses, which must not carry plaintext.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from carnet.domain.reconcile import evidence
from carnet.domain.records import Kind, Memory, Source, Status
from carnet.domain.text import content_terms, exact_key, jaccard


class Action(StrEnum):
    CREATE = "create"
    MERGE = "merge"
    SUPERSEDE = "supersede"
    UNCHANGED = "unchanged"


class Rule(StrEnum):
    NO_MATCH = "no_match"
    REPLAY = "replay"
    EXACT = "exact"
    JUDGE = "judge"
    SUBSUMED = "subsumed"
    JACCARD = "jaccard"
    COSINE = "cosine"


@dataclass(frozen=True, slots=True)
class ReconcileThresholds:
    """Similarity thresholds; the defaults are DESIGN's, the real values come from calibration.

    ``calibrated`` is False when no calibration exists for the embedding model in use: the
    defaults assume another embedder and callers should say so (readiness, logs).
    """

    jaccard_dup: float = 0.6
    cosine_dup: float = 0.92
    calibrated: bool = False
    model_id: str | None = None

    def __post_init__(self) -> None:
        if not 0.0 < self.jaccard_dup <= 1.0:
            raise ValueError("jaccard_dup must be in (0, 1]")
        if not -1.0 <= self.cosine_dup <= 1.0:
            raise ValueError("cosine_dup must be in [-1, 1]")

    @classmethod
    def from_mapping(cls, data: Mapping[str, object], *, model_id: str | None = None) -> ReconcileThresholds:
        """Read a calibration file's ``thresholds`` object (unknown keys are ignored)."""
        defaults = cls()
        return cls(
            jaccard_dup=_number(data, "jaccard_dup", defaults.jaccard_dup),
            cosine_dup=_number(data, "cosine_dup", defaults.cosine_dup),
            calibrated=True,
            model_id=model_id,
        )

    def to_mapping(self) -> dict[str, float]:
        return {"jaccard_dup": self.jaccard_dup, "cosine_dup": self.cosine_dup}


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
    tokens: tuple[str, ...] = ()  # its blind-index tokens (references and identifiers it names)
    subject_id: str = ""  # the member's id as the caller named it: a number naming the member, not a case


@dataclass(frozen=True, slots=True)
class Decision:
    """What to do with the new candidate, and why.

    ``target``: the record to reinforce (MERGE) or that already holds it (UNCHANGED).
    ``superseded``: records the new fact makes untrue (SUPERSEDE): the service creates the new record
    and closes these. ``superseded_by``: a newer record that makes the (late) new fact untrue already:
    it is created closed. ``uncertain``: candidates the judge could not settle, for an LLM to decide;
    ``uncertain_newer``: newer records it could not settle as closing the (late) new fact.
    ``contest``: the uncertain record ranked after the new fact until an LLM settles the pair (or for good,
    when none does); ``contest_newer``: the newer record the (late) new fact is ranked after.
    """

    action: Action
    rule: Rule
    reason: str
    target: str | None = None
    superseded: tuple[str, ...] = ()
    superseded_by: str | None = None
    uncertain: tuple[str, ...] = ()
    uncertain_newer: tuple[str, ...] = ()
    contest: str | None = None
    contest_newer: str | None = None
    score: float | None = None


class PairJudge(Protocol):
    """Scores pairs of notes: the chance that ``newer`` makes ``older`` untrue, from the pair's evidence
    (``evidence.features``). ``SupersessionModel`` is the shipped one; benchmarks pass others (the labels)."""

    @property
    def close_at(self) -> float: ...

    @property
    def ask_from(self) -> float: ...

    def judge(self, older: Memory | Incoming, newer: Memory | Incoming, x: tuple[float, ...]) -> float: ...

    def contests(self, x: tuple[float, ...]) -> bool:
        """Whether an uncertain pair ranks the older after the newer while no LLM has settled it."""
        ...


@dataclass(frozen=True, slots=True)
class _Read:
    """A note read once for every rule (a subject's records recur across the writes of a batch)."""

    tokens: frozenset[str]
    numbers: frozenset[str]
    exact: str
    bag: Counter[str]
    evidence: evidence.Reading


@dataclass(frozen=True, slots=True)
class _Seen:
    """A candidate (or the incoming note) with its reading and its cosine to the incoming note."""

    note: Memory | Incoming
    id: str
    cosine: float
    read: _Read
    valid_from: datetime | None
    tokens: frozenset[str]


Memo = MutableMapping[tuple[str, str], _Read]


def _read(text: str, pseudo_text: str, memo: Memo | None) -> _Read:
    key = (text, pseudo_text)
    if memo is not None and key in memo:
        return memo[key]
    terms = content_terms(pseudo_text)
    tokens = frozenset(terms)
    out = _Read(tokens, frozenset(t for t in tokens if any(ch.isdigit() for ch in t)), exact_key(text),
                Counter(terms), evidence.read(pseudo_text))
    if memo is not None:
        memo[key] = out
    return out


def _see(note: Memory | Incoming, cosine: float, memo: Memo | None) -> _Seen:
    tokens = note.blind_index if isinstance(note, Memory) else note.tokens
    return _Seen(note, note.id or "", cosine, _read(note.text, note.pseudo_text, memo), note.valid_from,
                 frozenset(tokens))


def decide(
    new: Incoming | str,
    candidates: Sequence[tuple[Memory, float]],
    thresholds: ReconcileThresholds,
    *,
    memo: Memo | None = None,
    judge: PairJudge | None = None,
) -> Decision:
    """Decide CREATE / MERGE / SUPERSEDE / UNCHANGED for ``new`` (see the module doc).

    ``memo``: a dict the caller keeps for one batch, so a record read for one write is not read
    again for the next (a subject's neighbours recur). It holds plaintext readings: scope it to a
    request, never to the process. ``judge``: the supersession judge; without one nothing is closed.

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
    seen_new = _see(incoming, 1.0, memo)
    seen = [_see(m, c, memo) for m, c in pool]
    decision = _by_similarity(seen_new, seen, thresholds, incoming.kind)
    if decision is None and judge is not None and incoming.kind is Kind.FACT:
        decision = _by_judge(seen_new, seen, judge)
    return decision or Decision(Action.CREATE, Rule.NO_MATCH, "no duplicate or contradiction found")


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


def _by_similarity(new: _Seen, seen: Sequence[_Seen], t: ReconcileThresholds, kind: Kind) -> Decision | None:
    within = [s for s in seen if _subsumed(new, s)] if kind is Kind.FACT else []
    if within:
        s = max(within, key=lambda s: s.cosine)
        return Decision(Action.MERGE, Rule.SUBSUMED, "every content word of the note is in the record",
                        target=s.id, score=s.cosine)  # fmt: skip
    best: tuple[float, float, _Seen] | None = None
    for s in seen:
        if not _may_merge(new, s):
            continue
        j = jaccard(new.read.tokens, s.read.tokens)
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


def _subsumed(new: _Seen, old: _Seen) -> bool:
    """The note repeats part of the record and adds nothing: "SIN-2025-071228." after "Le conseiller
    déclare le sinistre incendie, numéro SIN-2025-071228.". Every word as many times at least (the record
    "numéro 12 du membre 1" does not hold "numéro 1 du membre 1"), and the same polarity."""
    return (bool(new.read.tokens) and new.read.tokens < old.read.tokens and new.read.bag <= old.read.bag
            and new.read.evidence.negated == old.read.evidence.negated)


def _may_merge(new: _Seen, old: _Seen) -> bool:
    """Similar wording with different numbers or polarity is another fact."""
    return new.read.numbers == old.read.numbers and new.read.evidence.negated == old.read.evidence.negated


def _by_judge(new: _Seen, seen: Sequence[_Seen], judge: PairJudge) -> Decision | None:
    """The most probable closure among the candidates, in time order: a record newer than the note (a
    late write) is judged as the newer of the pair, and then closes the note instead."""
    cosines = [s.cosine for s in seen]
    best = max(cosines)
    view = [_side(s) for s in (new, *seen)]  # the note first, then its candidates
    own = frozenset({new.note.subject_id} if isinstance(new.note, Incoming) and new.note.subject_id else ())
    scored: list[tuple[float, bool, _Seen, bool]] = []  # (probability, late, candidate, may be contested)
    for s, side, rank in zip(seen, view[1:], evidence.ranks(cosines), strict=True):
        if _same_instant(s, new):  # said at the same moment (one batch, one call's turn): neither is newer
            continue
        late = _newer(s, new)
        (older, newer), (o, n) = ((new, s), (view[0], side)) if late else ((s, new), (side, view[0]))
        x = evidence.features(o, n, cosine=s.cosine, rank=rank, best=best,
                              opened=evidence.opened_case(o, n, view, own=own))
        q = judge.judge(older.note, newer.note, x)
        if evidence.no_change_of_it(o, n):  # a relative's number, a one-off: no change of the record, asked at most
            scored.append((min(q, math.nextafter(judge.close_at, 0.0)), late, s, False))
        else:
            scored.append((q, late, s, judge.contests(x)))
    if not scored:
        return None
    p, late, top, _ = max(scored, key=lambda t: t[0])
    if p >= judge.close_at:
        if late:
            return Decision(Action.CREATE, Rule.JUDGE, f"a newer record makes this note untrue: judge {p:.2f}",
                            superseded_by=top.id, score=p)  # fmt: skip
        return Decision(Action.SUPERSEDE, Rule.JUDGE, f"judge {p:.2f} >= {judge.close_at:.2f}",
                        superseded=(top.id,), score=p)  # fmt: skip
    ordered = sorted(scored, key=lambda t: t[0], reverse=True)  # the most probable first
    band = [(s.id, was_late, contested) for q, was_late, s, contested in ordered if q >= judge.ask_from]
    if not band:
        return None
    return Decision(Action.CREATE, Rule.JUDGE, f"uncertain: judge {p:.2f} < {judge.close_at:.2f}",
                    uncertain=tuple(i for i, was_late, _ in band if not was_late),
                    uncertain_newer=tuple(i for i, was_late, _ in band if was_late),
                    contest=next((i for i, was_late, c in band if c and not was_late), None),
                    contest_newer=next((i for i, was_late, c in band if c and was_late), None), score=p)


def _side(s: _Seen) -> evidence.Side:
    return evidence.Side(s.read.evidence, s.valid_from, s.tokens)


def _same_instant(old: _Seen, new: _Seen) -> bool:
    return old.valid_from is not None and old.valid_from == new.valid_from


def _newer(old: _Seen, new: _Seen) -> bool:
    return old.valid_from is not None and new.valid_from is not None and old.valid_from > new.valid_from
