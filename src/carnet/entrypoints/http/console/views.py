"""What the pages show, shaped from the facade's results: the timeline with its supersession chains,
and each ranked memory's score signals with the share each had in its score ("why is this here")."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from uuid import UUID

from carnet.domain.records import Kind, Memory, Status
from carnet.domain.scoring import Weights
from carnet.errors import InvalidInput
from carnet.services.memories.recall import Ranked

_SUBJECT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@\-]{0,127}$")  # as the REST path parameter
KINDS = (Kind.FACT, Kind.EPISODE, Kind.PROCEDURE)


def subject_id(raw: str) -> str:
    value = raw.strip()
    if not _SUBJECT.match(value):
        raise InvalidInput("subject id: 1-128 letters, digits and . _ : @ -")
    return value


def memory_id(raw: str) -> str:
    try:
        return str(UUID(raw.strip()))
    except ValueError:
        raise InvalidInput("memory id: a UUID") from None


def intake_id(raw: str) -> str:
    try:
        return str(UUID(raw.strip()))
    except ValueError:
        raise InvalidInput("intake id: a UUID") from None


@dataclass(slots=True)
class Entry:
    memory: Memory
    anchor: str
    replaced_by: Memory | None = None  # the record that superseded this one
    replaces: list[Memory] = field(default_factory=list)  # the records this one superseded
    contested_by: list[Memory] = field(default_factory=list)  # newer notes that may have made it untrue


@dataclass(frozen=True, slots=True)
class Timeline:
    by_kind: dict[str, list[Entry]]
    total: int
    superseded: int
    more: bool  # the subject has more records than one page shows


def anchor(memory_id: str) -> str:
    return "m-" + memory_id


def timeline(items: Sequence[Memory], *, more: bool) -> Timeline:
    """Records newest first (by when they became true) per kind, each linked to what superseded it, to
    what it superseded, and (active) to the newer notes that may have made it untrue (``contested_by``)."""
    by_id = {m.id: m for m in items}
    entries = {m.id: Entry(m, anchor(m.id)) for m in items}
    for m in items:
        if m.superseded_by and m.superseded_by in entries:
            entries[m.id].replaced_by = by_id[m.superseded_by]
            entries[m.superseded_by].replaces.append(m)
        if m.status is Status.ACTIVE:
            entries[m.id].contested_by = [by_id[c] for c in m.contested_by if c in by_id]
    by_kind: dict[str, list[Entry]] = {k.value: [] for k in KINDS}
    for e in sorted(entries.values(), key=lambda e: (e.memory.valid_from, e.memory.recorded_at), reverse=True):
        by_kind.setdefault(e.memory.kind.value, []).append(e)
    superseded = sum(1 for m in items if m.status is Status.SUPERSEDED)
    return Timeline(by_kind, len(items), superseded, more)


# Where a signal (0..1) stops being weak, then average: the calibrated relevance is 0 for unrelated text and 1
# for a paraphrase, so a third of the way is already a clear match; the record's own signals are plain shares.
THRESHOLDS = {"relevance": (0.2, 0.4), "keyword": (0.3, 0.7), "importance": (0.4, 0.7), "recency": (0.3, 0.7),
              "frequency": (0.3, 0.7), "confidence": (0.4, 0.7)}
LEVELS = ("low", "medium", "high")


def level(signal: str, value: float) -> str:
    """``low``, ``medium`` or ``high``: what the pages say of a signal instead of its number."""
    medium, high = THRESHOLDS[signal]
    return "high" if value >= high else "medium" if value >= medium else "low"


@dataclass(frozen=True, slots=True)
class Why:
    ranked: Ranked
    levels: dict[str, str]  # each signal in words: low, medium, high (never a cosine, never below zero)
    parts: dict[str, float]  # each signal times its weight, over the weights' total: they sum to the score
    main: str  # the signal with the largest part


def why(r: Ranked, w: Weights) -> Why:
    """The terms of ``carnet.domain.scoring.final_score``: relevance (dense and keyword fused; it can be
    below zero when the calibrated relevance is), importance, recency, frequency and confidence. The page
    shows the term that adds most and each signal's level, not the numbers (a supervisor reads words)."""
    s = r.signals
    fused = (1.0 - w.sparse_weight) * s.ranking_relevance + w.sparse_weight * s.keyword
    total = w.total() or 1.0
    parts = {"relevance": w.relevance * fused / total, "importance": w.importance * s.importance / total,
             "recency": w.recency * s.recency / total, "frequency": w.frequency * s.frequency / total,
             "confidence": w.confidence * s.confidence / total}
    values = {"relevance": s.relevance, "keyword": s.keyword, "importance": s.importance, "recency": s.recency,
              "frequency": s.frequency, "confidence": s.confidence}
    return Why(r, {k: level(k, v) for k, v in values.items()}, {k: round(v, 3) for k, v in parts.items()},
               max(parts, key=lambda k: parts[k]))


def whys(ranked: Sequence[Ranked], w: Weights) -> list[Why]:
    return [why(r, w) for r in ranked]
