"""The rule extractor's turn filter file (``carnet/calibration/turn-filter.json``, or
``CARNET_TURN_FILTER_PATH`` for a site's own, written by ``carnet extract train``): read once by the wiring.

Plain JSON (weights, threshold, manifest): never unpickled. A file this version cannot use stops the start
with ``TurnModelError`` naming what is wrong.
"""

from __future__ import annotations

import json
from pathlib import Path

from carnet.domain.extraction.turn_model import TurnModel, TurnModelError

__all__ = ["TURN_FILE", "load_turn_filter"]

TURN_FILE = "turn-filter.json"


def load_turn_filter(path: Path) -> TurnModel:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise TurnModelError(f"{path.name}: cannot be read as JSON ({type(exc).__name__})") from exc
    model = data.get("model") if isinstance(data, dict) else None
    if not isinstance(model, dict):
        raise TurnModelError(f"{path.name}: no 'model' object")
    return TurnModel.from_mapping(model)
