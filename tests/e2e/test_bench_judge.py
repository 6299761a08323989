"""``carnet bench judge`` and ``carnet judge train`` as a user runs them, on a small labelled file written
for this test (two members, a changed address and a changed premium, look-alikes that change nothing):
the commands' JSON, the oracle's bound, leave-one-out, late notes, and a judge file that loads back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from carnet.adapters.local.judge_file import load_judge
from carnet.entrypoints.cli.main import app

runner = CliRunner()

pytestmark = pytest.mark.slow  # processes that load the embedder and write every fact through reconcile


def _facts(*texts: tuple[str, str]) -> list[dict[str, str]]:
    return [{"at": at, "text": text} for at, text in texts]


def _file(path: Path, tenant: str, member: str) -> Path:
    subject = {
        "facts": _facts(
            ("2025-01-10T09:00:00+01:00", f"{member} habite au 4 rue des Tilleuls à Nantes."),
            ("2025-01-10T09:01:00+01:00", "Cotisation habitation : 32 euros par mois, prélevée le 5."),
            ("2025-02-02T10:00:00+01:00", "Préfère être appelé le matin, avant 11 heures."),
            ("2025-05-20T14:00:00+02:00", f"{member} a déménagé : habite désormais au 9 quai Fleuri à Rennes."),
            ("2025-06-01T11:00:00+02:00", "Sa fille étudie à Lille, elle a son propre contrat."),
            ("2025-09-15T16:00:00+02:00", "Cotisation habitation portée à 35 euros par mois à compter d'octobre."),
        ),
        "superseded": [{"old": 0, "by": 3}, {"old": 1, "by": 5}],
        "queries": [], "calls": [], "pii": [],
    }
    path.write_text(json.dumps({"about": "test", "tenants": {tenant: {"subjects": {"M-1": subject}}},
                                "cross_tenant_probes": []}), encoding="utf-8")
    return path


def _carnet(*args: str) -> dict[str, object]:
    """The command as the CLI runs it, in this process (the embedder loaded once for the file's commands;
    `carnet judge train` below runs as its own process, as a user types it)."""
    done = runner.invoke(app, list(args))
    assert done.exit_code == 0, done.output[-2000:]
    out: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def test_oracle_leave_one_out_and_training_on_small_files(tmp_path: Path) -> None:
    data = tmp_path / "labelled"
    data.mkdir()
    _file(data / "a.json", "assur-a", "Le membre")
    _file(data / "b.json", "assur-b", "L'adhérent")
    oracle = _carnet("bench", "judge", "--data", str(data), "--judge", "oracle", "--late", "1.0", "--json")
    assert oracle["mode"] == "oracle" and oracle["candidate_recall"] == 1.0
    assert oracle["hidden_mean"] == 1.0 and oracle["false_share_mean"] == 0.0
    assert oracle["late_hidden"] == "4/4"  # the older facts written last are stored closed
    files = {f["file"]: f for f in oracle["files"]}  # type: ignore[union-attr]
    assert set(files) == {"a", "b"} and files["a"]["labelled"] == 2 and files["a"]["facts"] == 6

    loo = _carnet("bench", "judge", "--data", str(data / "a.json"), "--data", str(data / "b.json"),
                  "--leave-one-out", "--json")
    assert loo["mode"] == "leave-one-out" and len(loo["files"]) == 2  # type: ignore[arg-type]
    assert 0.0 <= loo["hidden_worst"] <= loo["hidden_mean"] <= 1.0  # type: ignore[operator]

    out = tmp_path / "judge.json"
    # The judge in use reads features this code no longer computes (a version before a new feature): training
    # a new one must not need it.
    older = tmp_path / "older-judge.json"
    older.write_text(json.dumps({"model": {"version": "0", "features": ["cosine"], "mean": [0.0], "scale": [1.0],
                                           "weights": [1.0], "bias": 0.0, "close_at": 0.9, "ask_from": 0.5}}),
                     encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "carnet", "judge", "train", "--data", str(data), "--out", str(out),
                           "--keep-held-out", str(tmp_path / "held")], capture_output=True, text=True,
                          timeout=600, check=False, env=os.environ | {"CARNET_JUDGE_PATH": str(older)})
    assert done.returncode == 0, done.stderr[-2000:]
    judge = load_judge(out)
    manifest = json.loads(out.read_text(encoding="utf-8"))["manifest"]
    assert [d["file"] for d in manifest["data"]] == ["a.json", "b.json"] and manifest["corrections"] == 0
    assert judge.probability(manifest["sample"][0]["x"]) == pytest.approx(manifest["sample"][0]["p"], abs=1e-6)
    assert sorted(p.name for p in (tmp_path / "held").iterdir()) == ["without-a.json", "without-b.json"]
    shipped = _carnet("bench", "judge", "--data", str(data), "--judge-file", str(out), "--json")
    assert shipped["mode"] == "shipped" and len(shipped["files"]) == 2  # type: ignore[arg-type]


def test_a_bad_data_path_is_refused_with_a_message(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "carnet", "bench", "judge", "--data", str(tmp_path / "none.json")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2 and "does not exist" in done.stderr


def test_the_cascade_bound_with_an_llm_that_is_always_right(tmp_path: Path) -> None:
    """``--llm labels`` runs the service's cascade step (services/memories/judge) with the labels as the
    LLM's answer. A judge that settles nothing (every pair uncertain) leaves the whole decision to it: every
    labelled change reached by the candidates is closed, nothing else, and every write with a candidate
    called it; late notes too, asked whether the newer record retires them. (That a judge sure of every
    pair never calls the LLM: tests/e2e/test_llm_judge_explicit.py.)"""
    from tests.support.judges import always_uncertain

    data = _file(tmp_path / "a.json", "assur-a", "Le membre")
    judge = str(always_uncertain(tmp_path))
    asked = _carnet("bench", "judge", "--data", str(data), "--judge-file", judge, "--llm", "labels", "--json")
    [row] = asked["files"]  # type: ignore[misc]
    assert asked["llm"] == "labels" and row["hidden"] == 2 and row["false_closures"] == 0
    assert row["false_contested"] == 0  # what the LLM kept true is no longer ranked after the note
    alone = _carnet("bench", "judge", "--data", str(data), "--judge-file", judge, "--json")
    [kept] = alone["files"]  # type: ignore[misc]
    # Without an LLM nothing is closed: each labelled older fact stays active, ranked after its newer note,
    # and so are facts the judge was unsure of that no note replaced (the look-alikes: false contests). Each
    # note contests its most probable candidate only; the newest, contested by none, is never one.
    assert (kept["hidden"], kept["ranked_after"], alone["shown_current_mean"]) == (0, 2, 1.0)
    assert 0 < kept["false_contested"] < 6 and alone["false_contested_share_mean"] > 0
    assert 0 < row["llm_calls"] <= 5 and asked["llm_share"] == pytest.approx(row["llm_calls"] / 6, abs=1e-4)
    late = _carnet("bench", "judge", "--data", str(data), "--judge-file", judge, "--llm", "labels", "--late", "1.0",
                   "--json")
    assert late["late_hidden"] == "2/2" and late["false_share_mean"] == 0.0  # written last, asked, stored closed


def test_the_cascade_with_the_mistral_the_settings_configure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--llm mistral``: the cascade's step asks the Mistral of ``CARNET_LLM__*`` (here the vLLM stand-in over
    HTTP), so a site with a GPU measures its own model on labelled files. The judge leaves every pair to it
    (alone it closes nothing: ``test_the_cascade_bound_with_an_llm_that_is_always_right``); a model that always
    names the first candidate closes one record a call. Every write that asked is counted, a failed call too
    (that write stands, as in the service), and the model is shown pseudonymised notes only."""
    named = ["1"]
    from tests.support.judges import always_uncertain
    from tests.support.vllm_server import VllmStandIn, answer, fault, serving

    data = _file(tmp_path / "a.json", "assur-a", "Le membre")
    stand_in = VllmStandIn()
    stand_in.push(fault(500))  # the first call fails (no retry): that write stands, counted
    stand_in.push(*(answer({"obsolete_ids": named}) for _ in range(20)))
    with serving(stand_in) as base:
        for key, value in (("EXTRACTOR", "mistral"), ("LLM__BASE_URL", base), ("LLM__MODEL", stand_in.served_model),
                           ("LLM__API_KEY", stand_in.api_key or ""), ("LLM__MAX_RETRIES", "0")):
            monkeypatch.setenv(f"CARNET_{key}", value)
        out = _carnet("bench", "judge", "--data", str(data), "--judge-file", str(always_uncertain(tmp_path)),
                      "--llm", "mistral", "--json")
    [row] = out["files"]  # type: ignore[misc]
    calls = [r for r in stand_in.requests if "obsolete" in r.system.lower() or "obsol" in r.user.lower()]
    assert out["llm"] == "mistral" and 1 < row["llm_calls"] == len(stand_in.requests) == len(calls)
    assert out["llm_failed"] == row["llm_failed"] == 1
    # one closure a call at most; counted by fact, a closure may hide a labelled fact and be false too
    assert row["hidden"] > 0 and 0 < row["false_closures"] <= row["llm_calls"]
    assert not any("Tilleuls" in r.user or "Fleuri" in r.user for r in stand_in.requests)  # the addresses: placeholders
    assert not stand_in.problems
