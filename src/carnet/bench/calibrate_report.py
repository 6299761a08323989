"""The calibration's result: per-label cosine distributions and scores, and the per-model file it is written to."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from carnet.adapters.local.calibration_file import calibration_path
from carnet.bench.calibrate_pairs import Label
from carnet.bench.calibrate_score import Evaluation, Score
from carnet.domain.reconcile.decide import ReconcileThresholds


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
class CalibrationReport:
    model_id: str
    thresholds: ReconcileThresholds
    cosine_zero: float  # median query->passage cosine of unrelated pairs: relevance 0 for ``CosineScale``
    cosine_one: float  # median query->passage cosine of duplicates: relevance 1
    cosine: dict[Label, Distribution]
    in_sample: Evaluation
    cross_validated: Evaluation
    holdout: Evaluation | None
    pairs_sha256: str


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
        "in_sample": evaluation(report.in_sample),
        "cross_validated_5_fold": evaluation(report.cross_validated),
        "holdout": evaluation(report.holdout) if report.holdout else None,
    }


def vars_of(obj: Distribution | Score) -> dict[str, float]:
    return {name: getattr(obj, name) for name in obj.__slots__}
