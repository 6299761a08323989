"""``carnet extract train`` as a user runs it, on two small labelled files written for this test (a member's
calls and the advisor's notes of them): the turn filter it writes loads back, its manifest names the files
and their checksums, its held-out and training figures, and its sample re-scores."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from carnet.adapters.local.turn_file import load_turn_filter

pytestmark = pytest.mark.slow  # a process that loads the write path's PII detector


def _call(at: str, *turns: tuple[str, str]) -> dict[str, object]:
    return {"session_id": f"s-{at}", "at": at, "messages": [{"role": r, "content": c, "at": at} for r, c in turns]}


def _file(path: Path, tenant: str, town: str, amount: str) -> Path:
    subject = {
        "facts": [{"at": "2025-03-02T10:10:00+01:00", "text": f"Déménagement à {town}, 4 rue des Tilleuls."},
                  {"at": "2025-03-02T10:11:00+01:00", "text": f"Cotisation habitation : {amount} euros par mois."}],
        "calls": [_call("2025-03-02T10:00:00+01:00",
                        ("advisor", "Bonjour, que puis-je faire pour vous ?"),
                        ("user", f"Bonjour. J'ai déménagé, j'habite maintenant à {town}, 4 rue des Tilleuls."),
                        ("advisor", "C'est noté. Votre contrat reste le même ?"),
                        ("user", "Oui oui."),
                        ("advisor", f"Votre cotisation habitation passe à {amount} euros par mois."),
                        ("user", "Merci, au revoir."))],
        "queries": [], "superseded": [], "pii": [],
    }
    path.write_text(json.dumps({"about": "test", "tenants": {tenant: {"subjects": {"M-1": subject}}},
                                "cross_tenant_probes": []}), encoding="utf-8")
    return path


def test_the_turn_filter_is_trained_measured_held_out_and_written_with_its_manifest(tmp_path: Path) -> None:
    data = tmp_path / "labelled"
    data.mkdir()
    files = [_file(data / "a.json", "assur-a", "Rennes", "32,50"), _file(data / "b.json", "assur-b", "Lille", "41")]
    out = tmp_path / "turn-filter.json"
    done = subprocess.run([sys.executable, "-m", "carnet", "extract", "train", "--data", str(data), "--out", str(out),
                           "--version", "t1"], capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    model = load_turn_filter(out)
    manifest = json.loads(out.read_text(encoding="utf-8"))["manifest"]
    assert model.version == "t1" and manifest["trained_by"] == "carnet extract train"
    assert [(d["file"], d["sha256"], d["turns"]) for d in manifest["data"]] == [
        (f.name, hashlib.sha256(f.read_bytes()).hexdigest(), 6) for f in files]
    assert [f["file"] for f in manifest["leave_one_out"]["files"]] == ["a", "b"]
    assert manifest["fit_on_training_data"]["files"][0]["labelled_per_call"] == 2.0  # the two turns the notes quote
    assert model.probability(manifest["sample"][0]["x"]) == pytest.approx(manifest["sample"][0]["p"], abs=1e-6)
