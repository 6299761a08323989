"""Choosing the duplicate threshold from the pairs' cosines: ``cosine_dup`` by F0.5 with a margin."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from carnet.bench.calibrate_pairs import LabelledPair, Outcome
from carnet.bench.calibrate_score import Evaluation, Score, predict, score_outcomes
from carnet.domain.reconcile.decide import ReconcileThresholds

SAFETY_MARGIN = 0.01
_DEFAULTS = ReconcileThresholds()
_GRID_STEP = 0.0025
_FOLDS = 5


def choose(pairs: Sequence[LabelledPair], cosines: Sequence[float], jaccard_dup: float) -> ReconcileThresholds:
    split = _split_outcomes(pairs, cosines, jaccard_dup)
    best: tuple[float, float] | None = None
    for dup in np.arange(0.5, 1.0 + 1e-9, _GRID_STEP):
        d = round(float(min(dup, 1.0)), 4)
        predicted = [above if c >= d else below for c, (above, below) in zip(cosines, split, strict=True)]
        score = _f_half(score_outcomes(pairs, predicted, cosines).scores["merge"])
        if best is None or score >= best[0]:
            best = (score, d)  # >=: ties go to the higher, safer threshold
    cosine_dup = max(best[1] if best else _DEFAULTS.cosine_dup, _clear_of_wrong_merges(pairs, cosines, split))
    return ReconcileThresholds(jaccard_dup, cosine_dup)


def _clear_of_wrong_merges(
    pairs: Sequence[LabelledPair], cosines: Sequence[float], split: Sequence[tuple[Outcome, Outcome]]
) -> float:
    """``SAFETY_MARGIN`` above the highest non-duplicate that the cosine rule alone would merge.

    F0.5 lands on the first threshold that separates the pairs, often a hair above a related pair;
    unseen notes are not that kind, so the threshold keeps a margin.
    """
    risky = [c for p, c, (above, below) in zip(pairs, cosines, split, strict=True)
             if p.label != "duplicate" and above == "merge" and below != "merge"]  # fmt: skip
    if not risky:
        return 0.0
    return min(1.0, math.ceil((max(risky) + SAFETY_MARGIN) / _GRID_STEP) * _GRID_STEP)


def _split_outcomes(
    pairs: Sequence[LabelledPair], cosines: Sequence[float], jaccard_dup: float
) -> list[tuple[Outcome, Outcome]]:
    """Each pair's outcome with its cosine at or above ``cosine_dup``, and below it.

    With one candidate, ``cosine_dup`` only matters through ``cosine >= cosine_dup``: two calls per
    pair replace one per pair and grid point.
    """
    split = []
    for pair, c in zip(pairs, cosines, strict=True):
        below = predict(pair, c, ReconcileThresholds(jaccard_dup, 1.0)) if c < 1.0 else "merge"
        above = predict(pair, c, ReconcileThresholds(jaccard_dup, c))
        split.append((above, below))
    return split


def _f_half(s: Score) -> float:
    if s.precision + s.recall == 0:
        return 0.0
    return 1.25 * s.precision * s.recall / (0.25 * s.precision + s.recall)


def cross_validate(pairs: Sequence[LabelledPair], cosines: Sequence[float], jaccard_dup: float) -> Evaluation:
    """Thresholds chosen on four folds, scored on the fifth (folds by position, deterministic)."""
    predicted: list[Outcome] = ["create"] * len(pairs)
    for fold in range(_FOLDS):
        train = [i for i in range(len(pairs)) if i % _FOLDS != fold]
        t = choose([pairs[i] for i in train], [cosines[i] for i in train], jaccard_dup)
        for i in range(fold, len(pairs), _FOLDS):
            predicted[i] = predict(pairs[i], cosines[i], t)
    evaluation = score_outcomes(pairs, predicted, cosines)
    return Evaluation(evaluation.pairs, evaluation.accuracy, evaluation.scores, evaluation.confusion)
