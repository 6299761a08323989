"""Ranking: fuse dense and keyword evidence into a relevance signal, then mix in the record's own signals.

The relevance floor is applied to ``relevance`` (the calibrated cosine), never to the fused final score:
a record that is important and fresh but says nothing about the question must not pass the floor.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from carnet.domain.records import Memory


@dataclass(frozen=True, slots=True)
class Weights:
    relevance: float = 0.70
    importance: float = 0.10
    recency: float = 0.10
    frequency: float = 0.05
    confidence: float = 0.05
    recency_half_life_days: float = 90.0
    sparse_weight: float = 0.25

    def total(self) -> float:
        return self.relevance + self.importance + self.recency + self.frequency + self.confidence


@dataclass(frozen=True, slots=True)
class CosineScale:
    """Maps an embedder's raw cosine onto 0..1 relevance.

    Embedders disagree on what a cosine means (e5 puts unrelated French sentences near 0.75, MiniLM
    near 0.1), so the floor would not carry from one model to another. ``zero`` is the cosine of
    unrelated text and ``one`` the cosine of paraphrases, both from the model's calibration file.
    """

    zero: float = 0.0
    one: float = 1.0

    def relevance(self, cosine: float) -> float:
        """Clipped to 0..1: what the floor compares and what responses show."""
        return max(0.0, min(1.0, self.linear(cosine)))

    def linear(self, cosine: float) -> float:
        """Unclipped: ranking keeps the order of records below ``zero`` instead of tying them at 0."""
        span = self.one - self.zero
        return cosine if span <= 0 else (cosine - self.zero) / span


@dataclass(frozen=True, slots=True)
class Signals:
    cosine: float
    relevance: float
    ranking_relevance: float
    keyword: float
    importance: float
    recency: float
    frequency: float
    confidence: float

    def as_dict(self) -> dict[str, float]:
        return {
            "cosine": round(self.cosine, 4),
            "relevance": round(self.relevance, 4),
            "keyword": round(self.keyword, 4),
            "importance": round(self.importance, 4),
            "recency": round(self.recency, 4),
            "frequency": round(self.frequency, 4),
            "confidence": round(self.confidence, 4),
        }


def recency(memory: Memory, now: datetime, half_life_days: float) -> float:
    """Exponential decay from when the fact became true (``valid_from``), not from when it was written
    or read: a claim's latest status must outrank its opening even when both were recorded today.
    Reads and reinforcements count in ``frequency`` instead."""
    age_days = max(0.0, (now - memory.valid_from).total_seconds() / 86400.0)
    return math.pow(0.5, age_days / half_life_days)


def frequency(memory: Memory) -> float:
    """Saturating count of reinforcements, the times the same thing was told again (5 ~ 0.9).

    Reads (``access_count``) do not count: a record is read because a search returned it, so counting
    reads would rank it higher for having been returned, a loop that feeds on the questions asked
    (on LoCoMo conv-26 it cost 2.7 points of recall@10, see docs/benchmarks.md). ``access_count``
    stays on the record for retention and reporting."""
    uses = 2 * memory.reinforcement_count
    return 1.0 - math.exp(-uses / 4.5)


def signals(
    memory: Memory,
    *,
    cosine: float,
    keyword: float,
    scale: CosineScale,
    weights: Weights,
    now: datetime,
) -> Signals:
    """``keyword`` is the keyword score already normalised to 0..1 within the candidate set."""
    return Signals(
        cosine=cosine,
        relevance=scale.relevance(cosine),
        ranking_relevance=scale.linear(cosine),
        keyword=keyword,
        importance=memory.importance,
        recency=recency(memory, now, weights.recency_half_life_days),
        frequency=frequency(memory),
        confidence=memory.confidence,
    )


def final_score(s: Signals, weights: Weights) -> float:
    fused = (1.0 - weights.sparse_weight) * s.ranking_relevance + weights.sparse_weight * s.keyword
    total = weights.total() or 1.0
    return (
        weights.relevance * fused
        + weights.importance * s.importance
        + weights.recency * s.recency
        + weights.frequency * s.frequency
        + weights.confidence * s.confidence
    ) / total
