"""The scenario benchmark's rules, on tiny inline scenarios through a real server, from facts and from calls."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
from typer.testing import CliRunner

from carnet.adapters.extractors.rules import RuleExtractor
from carnet.bench import scenarios_calls
from carnet.bench.scenarios import Source, evaluate
from carnet.bench.scenarios_report import Run, summary
from carnet.bootstrap.container import Container
from carnet.bootstrap.wiring import start_workers
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.server import running
from carnet.services.apikeys import create_key

SPEC: dict[str, Any] = {
    "tenants": {
        "t-a": {
            "subjects": {
                "s1": {
                    "facts": [
                        {"at": "2026-01-02T10:00:00Z", "text": "Le membre habite à Lyon 7e."},
                        {"at": "2026-01-02T10:05:00Z", "text": "Il a un contrat auto formule Tiers."},
                        {"at": "2026-03-01T10:00:00Z", "text": "Le membre habite maintenant à Villeurbanne."},
                    ],
                    "queries": [
                        {"q": "Où habite le membre ?", "expect_any": ["Villeurbanne"], "not_old": 0, "kind": "latest"},
                        {"q": "Quel contrat auto ?", "expect_any": ["Tiers"], "kind": "short"},
                        {"q": "Quel est son animal ?", "expect_any": ["chat siamois"]},
                    ],
                    "superseded": [{"old": 0, "by": 2}],
                }
            }
        },
        "t-b": {
            "subjects": {
                "s2": {"facts": [{"at": "2026-01-02T10:00:00Z", "text": "La cliente a un livret A."}], "queries": []}
            }
        },
    },
    "cross_tenant_probes": [
        {"tenant": "t-b", "subject": "s1", "q": "Où habite le membre ?", "must_return": 0},
        {"tenant": "t-b", "subject": "s2", "q": "Villeurbanne Lyon contrat", "must_not_contain": ["Villeurbanne"]},
    ],
}

# The file says fact 0 was superseded, but fact 1 is about something else: the engine keeps both
# active, so the old fact comes back and must count as stale, not hidden.
UNRELATED_PAIR: dict[str, Any] = {
    "tenants": {
        "t-a": {
            "subjects": {
                "s1": {
                    "facts": [
                        {
                            "at": "2026-01-02T10:00:00Z",
                            "text": "Le membre souhaite être appelé le matin avant 10 heures.",
                        },
                        {"at": "2026-02-02T10:00:00Z", "text": "Le membre possède un chien nommé Rex."},
                    ],
                    "queries": [
                        {
                            "q": "À quel moment appeler le membre ?",
                            "expect_any": ["matin"],
                            "not_old": 0,
                            "kind": "latest",
                        }
                    ],
                    "superseded": [{"old": 0, "by": 1}],
                }
            }
        }
    }
}

CALLS: dict[str, Any] = {
    "tenants": {
        "t-a": {
            "subjects": {
                "s1": {
                    "facts": SPEC["tenants"]["t-a"]["subjects"]["s1"]["facts"],
                    "calls": [
                        {
                            "session_id": "call-1",
                            "at": "2026-01-02T10:00:00Z",
                            "messages": [
                                {
                                    "role": "advisor",
                                    "content": "Bonjour, je vous écoute.",
                                    "at": "2026-01-02T10:00:00Z",
                                },
                                {
                                    "role": "user",
                                    "content": "Le membre habite à Lyon 7e.",
                                    "at": "2026-01-02T10:00:20Z",
                                },
                                {
                                    "role": "user",
                                    "content": "Il a un contrat auto formule Tiers.",
                                    "at": "2026-01-02T10:05:00Z",
                                },
                            ],
                        },
                        {
                            "session_id": "call-2",
                            "at": "2026-03-01T10:00:00Z",
                            "messages": [
                                {
                                    "role": "user",
                                    "content": "Le membre habite maintenant à Villeurbanne.",
                                    "at": "2026-03-01T10:00:00Z",
                                },
                            ],
                        },
                    ],
                    "queries": SPEC["tenants"]["t-a"]["subjects"]["s1"]["queries"][:2],
                    "superseded": [{"old": 0, "by": 2}],
                }
            }
        }
    }
}


def _run(container: Container, spec: dict[str, Any], source: Source = "facts") -> Run:
    if source == "calls":
        start_workers(container, extractor=RuleExtractor())
    keys = {
        t: create_key(container.deps.catalog, container.pepper, tenant=t, roles=["agent"])[0] for t in spec["tenants"]
    }
    with running(create_app(container)) as base:
        return evaluate(base, keys, spec, source=source)


def test_facts_mode_counts_hits_kinds_supersessions_and_leaks(container: Container) -> None:
    out = summary(_run(container, SPEC))
    assert (out["from"], out["queries"], out["hits"]) == ("facts", 3, 2)  # the pet has no answer stored: a miss
    assert out["by_kind"] == {
        "latest": {"recall_at_3": 1.0, "hits": 1, "queries": 1},
        "short": {"recall_at_3": 1.0, "hits": 1, "queries": 1},
        "untagged": {"recall_at_3": 0.0, "hits": 0, "queries": 1},
    }
    assert sum(k["hits"] for k in out["by_kind"].values()) == out["hits"]
    assert sum(k["queries"] for k in out["by_kind"].values()) == out["queries"]
    assert (out["superseded_hidden"], out["superseded_status"], out["superseded_total"]) == (1.0, 1.0, 1)
    assert (out["stale"], out["stale_checked"]) == (0.0, 1)
    assert out["false_superseded"] == 0 and out["leaks"] == 0
    assert out["noise"] is None and out["facts_per_call"] is None  # nothing to measure from facts


def test_a_superseded_fact_that_comes_back_is_stale_and_not_hidden(container: Container) -> None:
    out = summary(_run(container, UNRELATED_PAIR))
    assert (out["stale"], out["stale_queries"]) == (1.0, 1)
    assert out["recall_at_3"] == 0.0  # found, but stale: not a hit
    assert (out["superseded_hidden"], out["superseded_status"]) == (0.0, 0.0)
    assert any("returned by" in m for m in out["misses"])


def test_a_file_without_supersessions_reports_null(container: Container) -> None:
    subject = SPEC["tenants"]["t-a"]["subjects"]["s1"]
    spec = {
        "tenants": {"t-a": {"subjects": {"s1": {"facts": subject["facts"][:2], "queries": subject["queries"][1:2]}}}}
    }
    out = summary(_run(container, spec))
    assert out["superseded_hidden"] is None and out["superseded_status"] is None and out["stale"] is None
    assert out["superseded_total"] == 0 and out["recall_at_3"] == 1.0


def test_calls_mode_posts_the_calls_and_measures_the_extracted_records(container: Container) -> None:
    result = _run(container, CALLS, source="calls")
    out = summary(result)
    assert (out["from"], out["calls"], out["dead_intakes"]) == ("calls", 2, 0)
    assert result.calls.intakes == 2
    assert out["records"] >= 2 and out["facts_per_call"] == out["records"] / 2
    assert out["noise"] is not None and 0.0 <= out["noise"] <= 1.0
    assert out["queries"] == 2 and sum(k["queries"] for k in out["by_kind"].values()) == 2
    assert out["superseded_total"] == 1
    # the server is gone, the store stays: what the messages said is stored
    key = create_key(container.deps.catalog, container.pepper, tenant="t-a", roles=["agent"])[0]
    with (
        running(create_app(container)) as base,
        httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}) as http,
    ):
        texts = " ".join(r.text for r in scenarios_calls.records(http, "s1").values())
    assert "Villeurbanne" in texts and "Tiers" in texts


def test_from_takes_facts_or_calls_only() -> None:
    from carnet.entrypoints.cli.main import app

    result = CliRunner().invoke(app, ["bench", "scenarios", "--data", __file__, "--from", "transcripts"])
    assert result.exit_code == 2


def test_several_files_held_out_each_with_its_fold_judge_and_extractor(tmp_path: Path) -> None:
    """``bench scenarios --leave-one-out`` over two files: each measured with ``without-<file>.json`` and an
    extractor built from the other file only; per file, mean and worst."""
    from carnet.bench import scenarios_loo
    from tests.support.judges import judge_file

    folds = tmp_path / "folds"
    folds.mkdir()
    for name in ("a", "b"):
        judge_file(folds, close_at=0.9, ask_from=0.9).rename(folds / f"without-{name}.json")
        (tmp_path / f"{name}.json").write_text(json.dumps(CALLS), encoding="utf-8")
    seen: list[list[str]] = []

    def every_turn(others: Sequence[Path]) -> RuleExtractor:
        seen.append([p.stem for p in others])
        return RuleExtractor()

    out = scenarios_loo.run(data=[tmp_path / "a.json", tmp_path / "b.json"], source="calls", leave_one_out=True,
                            judge_dir=folds, judge_path=None, extractor_for=every_turn, json_out=False,
                            extraction="rules, every turn")
    assert seen == [["b"], ["a"]] and out["judge"] == "fold judges" and out["extraction"] == "rules, every turn"
    assert [f["file"] for f in out["files"]] == ["a", "b"]
    a = out["files"][0]
    assert a["said_basis"] == "expect_any" and a["records_ratio"] is not None and a["calls"] == 2
    assert out["recall_at_3_said"]["worst"] <= out["recall_at_3_said"]["mean"]
