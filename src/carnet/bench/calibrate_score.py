"""What reconcile does with one labelled pair, and how a set of outcomes scores against the labels."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from carnet.bench.calibrate_pairs import EXPECTED, LABELS, Label, LabelledPair, Outcome
from carnet.domain.reconcile.decide import Action, ReconcileThresholds, decide
from carnet.domain.records import Kind, Memory, Scope


@dataclass(frozen=True, slots=True)
class Score:
    """Precision and recall of one outcome against the label(s) that expect it."""

    precision: float
    recall: float
    predicted: int
    expected: int


@dataclass(frozen=True, slots=True)
class Evaluation:
    pairs: int
    accuracy: float
    scores: dict[Outcome, Score]
    confusion: dict[Label, dict[Outcome, int]]
    errors: list[dict[str, str]] = field(default_factory=list)


_SCOPE = Scope(tenant="calibration", subject="pairs")
_EPOCH = datetime(2025, 1, 1, tzinfo=UTC)


def predict(pair: LabelledPair, cosine: float, thresholds: ReconcileThresholds) -> Outcome:
    """What reconcile does when ``pair.b`` arrives and ``pair.a`` is the subject's only record."""
    stored = Memory(id="a", scope=_SCOPE, kind=Kind.FACT, text=pair.a, pseudo_text=pair.a,
                    recorded_at=_EPOCH, valid_from=_EPOCH, updated_at=_EPOCH)  # fmt: skip
    action = decide(pair.b, [(stored, cosine)], thresholds).action
    if action in (Action.MERGE, Action.UNCHANGED):
        return "merge"
    return "supersede" if action is Action.SUPERSEDE else "create"


def evaluate(pairs: Sequence[LabelledPair], cosines: Sequence[float], t: ReconcileThresholds) -> Evaluation:
    predicted = [predict(p, c, t) for p, c in zip(pairs, cosines, strict=True)]
    return score_outcomes(pairs, predicted, cosines)


def score_outcomes(pairs: Sequence[LabelledPair], predicted: Sequence[Outcome], cosines: Sequence[float]) -> Evaluation:
    confusion: dict[Label, dict[Outcome, int]] = {lab: {"merge": 0, "supersede": 0, "create": 0} for lab in LABELS}
    errors = []
    for pair, outcome, cosine in zip(pairs, predicted, cosines, strict=True):
        confusion[pair.label][outcome] += 1
        if outcome != EXPECTED[pair.label]:
            errors.append({"label": pair.label, "got": outcome, "cosine": f"{cosine:.3f}", "a": pair.a, "b": pair.b})
    outcomes: tuple[Outcome, ...] = ("merge", "supersede", "create")
    scores = {o: _outcome_score(confusion, o) for o in outcomes}
    correct = sum(confusion[lab][EXPECTED[lab]] for lab in LABELS)
    return Evaluation(len(pairs), round(correct / len(pairs), 4) if pairs else math.nan, scores, confusion, errors)


def _outcome_score(confusion: dict[Label, dict[Outcome, int]], outcome: Outcome) -> Score:
    labels = [lab for lab in LABELS if EXPECTED[lab] == outcome]
    predicted = sum(row[outcome] for row in confusion.values())
    true_pos = sum(confusion[lab][outcome] for lab in labels)
    expected = sum(sum(confusion[lab].values()) for lab in labels)
    precision = true_pos / predicted if predicted else 1.0
    recall = true_pos / expected if expected else 1.0
    return Score(round(precision, 4), round(recall, 4), predicted, expected)
