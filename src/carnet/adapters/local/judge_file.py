"""The supersession judge's file (``carnet/calibration/supersession-judge.json``, or
``CARNET_JUDGE_PATH`` for a site's own, written by ``carnet judge train``): read once by the wiring.

The file is plain JSON (weights, thresholds and a manifest): never unpickled. A file this version cannot
use stops the start with ``ModelFileError`` naming what is wrong; a judge trained with another embedding
model than the one configured is used but logged (its ``cosine`` feature was measured on another scale).
"""

from __future__ import annotations

import json
from pathlib import Path

import structlog

from carnet.domain.reconcile.judge_model import ModelFileError, SupersessionModel

__all__ = ["JUDGE_FILE", "load_judge", "manifest"]

JUDGE_FILE = "supersession-judge.json"
log = structlog.get_logger(__name__)


def load_judge(path: Path, *, embedding_model: str | None = None) -> SupersessionModel:
    data = _read(path)
    model = data.get("model")
    if not isinstance(model, dict):
        raise ModelFileError(f"{path.name}: no 'model' object")
    judge = SupersessionModel.from_mapping(model)
    trained_with = manifest(data).get("embedding_model")
    if embedding_model is not None and trained_with != embedding_model:
        log.warning("judge_other_embedder", trained_with=trained_with, configured=embedding_model)
    return judge


def manifest(data: dict[str, object]) -> dict[str, object]:
    found = data.get("manifest")
    return found if isinstance(found, dict) else {}


def _read(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelFileError(f"{path.name}: cannot be read as JSON ({type(exc).__name__})") from exc
    if not isinstance(data, dict):
        raise ModelFileError(f"{path.name}: not a JSON object")
    return data
