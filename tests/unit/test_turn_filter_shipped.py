"""The turn filter that ships (``carnet/calibration/turn-filter.json``): it loads, the wiring gives it
to the rule extractor, its manifest says what it was trained on (files and checksums, commit,
leave-one-writer-out figures), and its fixed sample re-scores to the stored probabilities."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from carnet.adapters.local.turn_file import TURN_FILE, load_turn_filter
from carnet.bootstrap.models import build_extractor
from carnet.bootstrap.wiring import CALIBRATION_DIR
from carnet.domain.extraction.turn_features import FEATURES
from carnet.domain.extraction.turn_model import TurnModelError
from carnet.settings.root import Settings

SHIPPED = CALIBRATION_DIR / TURN_FILE
BENCH = Path(__file__).resolve().parents[3] / "shared" / "bench"  # beside the clone, read only


def doc() -> dict[str, object]:
    data: dict[str, object] = json.loads(SHIPPED.read_text(encoding="utf-8"))
    return data


def test_the_shipped_filter_loads_and_the_rule_extractor_uses_it(tmp_path: Path) -> None:
    model = load_turn_filter(SHIPPED)
    assert len(model.weights) == len(FEATURES) and 0.0 < model.keep_at < 1.0
    extractor = build_extractor(Settings(data_dir=tmp_path))
    assert getattr(extractor, "turn_model", None) == model


def test_a_site_file_that_is_not_a_filter_stops_the_start(tmp_path: Path) -> None:
    bad = tmp_path / "filter.json"
    bad.write_text('{"model": {"version": "x"}}', encoding="utf-8")
    with pytest.raises(TurnModelError):
        build_extractor(Settings(data_dir=tmp_path, turn_filter_path=bad))


def test_its_manifest_names_the_data_and_the_held_out_figures() -> None:
    manifest = doc()["manifest"]
    assert isinstance(manifest, dict)
    assert manifest["trained_by"] == "carnet extract train" and manifest["commit"]
    assert manifest["features"] == list(FEATURES)
    files = manifest["data"]
    assert isinstance(files, list) and len(files) >= 6  # six writers with calls
    loo = manifest["leave_one_out"]
    assert {f["file"] for f in loo["files"]} == {Path(f["file"]).stem for f in files if f["calls"]}
    assert 0.0 <= loo["recall_worst"] <= loo["recall_mean"] <= 1.0


@pytest.mark.parametrize("row", range(3))
def test_its_sample_rescores_to_the_stored_probabilities(row: int) -> None:
    model = load_turn_filter(SHIPPED)
    sample = doc()["manifest"]["sample"][row]  # type: ignore[index]
    assert model.probability(sample["x"]) == pytest.approx(sample["p"], abs=1e-6)


def test_the_files_it_was_trained_on_are_the_ones_beside_the_clone() -> None:
    """The checksums match ``../shared/bench`` (the labelled files are read from there, never copied)."""
    for entry in doc()["manifest"]["data"]:  # type: ignore[index]
        found = list(BENCH.rglob(entry["file"]))
        assert len(found) == 1, f"{entry['file']}: {len(found)} under {BENCH} (the labelled files beside the clone)"
        assert hashlib.sha256(found[0].read_bytes()).hexdigest() == entry["sha256"]
