"""``carnet bench pii --notes`` (``bench.pii_notes``): labelled values still readable, and placeholders over
text that no labelled value covers, on a scenario file written for this test (the patterns' detector: no
model, so the figures are exact)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from carnet.bench.pii_notes import measure, replaced, subjects
from carnet.bench.pii_survival import BadCorpus, MemoryMaps
from carnet.domain.pii.detector import PatternDetector
from carnet.entrypoints.cli.main import app
from carnet.services.pii import Pii

DETECTOR = PatternDetector()

SCENARIO = {"tenants": {"assur": {"subjects": {"S-1": {
    "facts": [{"text": "Portable : 06 12 34 56 78.", "at": "2025-01-01"},
              {"text": "Prélèvement sur FR76 3000 6000 0112 3456 7890 189 à compter du 05/02.", "at": "2025-02-01"}],
    "calls": [{"session_id": "c1", "at": "2025-03-01", "messages": [
        {"role": "user", "content": "Mon nouveau portable c'est le zéro six douze trente-quatre."}]}],
    # Labelled as the files do: every spelling of each value; the phone's spelled-out form is partial on
    # purpose (a value the patterns cannot read), the IBAN is not labelled (so its placeholder is "over").
    "pii": [["06 12 34 56 78", "zéro six douze trente-quatre"]],
}}}}}


def _pii() -> Pii:
    return Pii(detector=DETECTOR, query_detector=DETECTOR, maps=MemoryMaps())


def test_placeholders_are_aligned_with_the_text_they_replace() -> None:
    assert replaced("Tél. 06 12 34 56 78, merci", "Tél. <PHONE_1>, merci") == [("PHONE", "06 12 34 56 78")]
    assert replaced("A et B", "<PERSON_1> et <PERSON_2>") == [("PERSON", "A"), ("PERSON", "B")]
    assert replaced("autre chose", "<PERSON_1> tout autre") is None


def test_values_readable_and_placeholders_over_unlabelled_text_are_counted(tmp_path: Path) -> None:
    path = tmp_path / "writer.json"
    path.write_text(json.dumps(SCENARIO), encoding="utf-8")
    items = list(subjects([tmp_path]))
    assert [(i.file, i.scope.subject, len(i.facts), len(i.calls)) for i in items] == [("writer", "S-1", 2, 1)]
    out = measure(_pii(), items)
    assert out["values_present"] == 2 and out["survived"] == 1  # the number said in words is still there
    assert out["placeholders_by_type"] == {"IBAN": 1, "PHONE": 1}
    assert out["over_masked"] == 1 and out["over_masked_examples"][0]["kind"] == "IBAN"


@pytest.mark.parametrize("spec", [
    [{"text": "x"}],  # not an object of tenants
    {"tenants": {"t": {"subjects": ["S-1"]}}},  # subjects not an object
    {"tenants": {"t": {"subjects": {"S-1": {"facts": [{"at": "2025-01-01"}]}}}}},  # a fact without its text
    {"tenants": {"t": {"subjects": {"S-1": {"calls": [{"messages": [{"role": "user"}]}]}}}}},  # no content
    {"tenants": {"t": {"subjects": {"S-1": {"pii": [7]}}}}},  # a value group that is a number
])  # fmt: skip
def test_a_file_that_is_no_scenario_file_is_refused(tmp_path: Path, spec: object) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(spec), encoding="utf-8")
    with pytest.raises(BadCorpus):
        list(subjects([bad]))
    result = CliRunner().invoke(app, ["bench", "pii", "--notes", str(bad)])
    assert result.exit_code == 2 and "--notes" in result.output
