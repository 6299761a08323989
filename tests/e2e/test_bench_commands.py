"""The benchmark commands run end to end on tiny loads and end with their JSON summary line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from carnet.entrypoints.cli.main import app

runner = CliRunner()

TINY_LOCOMO = [{
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Ana", "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a grey cat called Miso last week."},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "Lovely! I started rowing on Saturdays."},
            {"speaker": "Ana", "dia_id": "D1:3", "text": "My sister moved to Porto for her new job."},
        ],
    },
    "qa": [
        {"question": "What is the name of Ana's cat?", "answer": "Miso", "evidence": ["D1:1"], "category": 4},
        {"question": "Where did Ana's sister move?", "answer": "Porto", "evidence": ["D:1:3"], "category": 4},
        {"question": "What sport does Ben do?", "answer": "rowing", "evidence": ["D9:9"], "category": 4},
        {"question": "Unanswerable?", "answer": "", "evidence": ["D1:1"], "category": 5},
    ],
}]


def _last_json(output: str) -> dict[str, object]:
    summary: dict[str, object] = json.loads(output.strip().splitlines()[-1])
    return summary


def test_bench_locomo_json(tmp_path: Path) -> None:
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps(TINY_LOCOMO))
    result = runner.invoke(app, ["bench", "locomo", "--data", str(data), "--k", "1,2", "--json"])
    assert result.exit_code == 0, result.output
    s = _last_json(result.stdout)
    assert s["questions"] == 2  # category 5 skipped, one question left without valid evidence
    assert {"recall@1", "recall@2", "by_category", "p50_ms", "p95_ms", "p99_ms"} <= set(s)
    assert s["recall@2"] == 1.0


def test_bench_latency_json(tmp_path: Path) -> None:
    result = runner.invoke(app, ["bench", "latency", "--memories", "120", "--subjects", "4", "--queries", "10",
                                 "--store", str(tmp_path / "store"), "--json"])
    assert result.exit_code == 0, result.output
    s = _last_json(result.stdout)
    for key in ("ingest_per_s", "service_p50_ms", "service_p95_ms", "service_p99_ms", "http_p50_ms",
                "http_p95_ms", "http_p99_ms"):
        assert isinstance(s[key], float) and s[key] > 0, key
    assert s["service_cache_hit_rate"] == 0.0 and s["http_cache_hit_rate"] == 0.0
    # the server's own time per assemble is inside the client's, and a /healthz round trip below it
    assert 0 < s["http_floor_p50_ms"] < s["http_server_mean_ms"] < s["http_p99_ms"]
    assert s["service_open_ms_per_request"] > 0  # records are sealed and opened inside each request
    assert s["service_kms_calls"] == 0  # 4 subjects, keys cached during ingest: no KMS round trip


def _active_records(store: Path, subjects: int) -> int:
    """Counted through the store's own index, subject by subject (a fresh container on the store)."""
    from carnet.bench.served import TENANT, settings, subject
    from carnet.bootstrap.wiring import build
    from carnet.ports import RecordFilter
    from carnet.services.scope import scope_for

    container = build(settings(store))
    try:
        deps = container.deps
        return sum(deps.index.count(scope_for(deps, TENANT, subject(s)), where=RecordFilter())
                   for s in range(subjects))
    finally:
        container.close()


def test_bench_latency_text_pool_never_reuses_a_store_built_through_remember(tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    built = {"load": {"memories": 600, "subjects": 6}, "ingest": {"ingest_per_s": 1.0}}  # as `remember` built it
    (store / "bench-load.json").write_text(json.dumps(built))
    result = runner.invoke(app, ["bench", "latency", "--memories", "600", "--subjects", "6", "--queries", "10",
                                 "--text-pool", "100", "--store", str(store)])
    assert result.exit_code == 2 and "use another --store" in result.output, result.output
    assert json.loads((store / "bench-load.json").read_text()) == built


def test_bench_latency_text_pool_needs_a_text_per_memory_of_a_subject(tmp_path: Path) -> None:
    result = runner.invoke(app, ["bench", "latency", "--memories", "600", "--subjects", "3", "--queries", "10",
                                 "--text-pool", "100", "--store", str(tmp_path / "s")])
    assert result.exit_code == 2 and "without replacement" in result.output, result.output


@pytest.mark.slow  # two stores, each measured through `carnet serve`: 100 s alone, over 300 s under the suite's load
@pytest.mark.timeout(900)  # four processes start (two measurements, each with its server), each loading the models
def test_bench_latency_curve_measures_each_size_back_to_back(tmp_path: Path) -> None:
    result = runner.invoke(app, ["bench", "latency", "--curve", "100,300", "--subjects", "3", "--queries", "10",
                                 "--text-pool", "100", "--store", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    s = _last_json(result.stdout)
    rows = s["curve"]
    assert isinstance(rows, list) and [r["memories"] for r in rows] == [100, 300]
    assert [r["points"] for r in rows] == [100, 300]
    for r in rows:
        for key in ("service_p50_ms", "service_p95_ms", "service_p99_ms", "http_p50_ms", "http_p95_ms",
                    "http_p99_ms", "disk_bytes", "serve_rss_bytes", "serve_children_rss_bytes"):
            assert r[key] > 0, key
    assert isinstance(s["service_p95_ratio"], float) and isinstance(s["http_p95_ratio"], float)
    assert "cores" in str(s["machine"])
    assert {"load_average_start", "load_average_end"} <= set(s)
    # Each size's store: built from the pool (100 per subject from a pool of 100: every text once per
    # subject, nothing merged), marked so, and never reused by a run asked another way.
    store = tmp_path / "m300"
    marker = json.loads((store / "bench-load.json").read_text())
    assert marker["load"] == {"memories": 300, "subjects": 3, "builder": "text-pool", "text_pool": 100}
    assert marker["ingest"]["ingest_outcomes"] == {"created": 300}
    for other in ([], ["--text-pool", "150"]):  # through remember, or from another pool: refused, untouched
        again = runner.invoke(app, ["bench", "latency", "--memories", "300", "--subjects", "3", "--queries", "10",
                                    "--store", str(store), *other])
        assert again.exit_code == 2 and "use another --store" in again.output, again.output
    assert _active_records(store, 3) == 300  # through the store's own index, after the refused runs


def test_bench_crypto_json() -> None:
    result = runner.invoke(app, ["bench", "crypto", "--memories", "60", "--subjects", "3", "--pairs", "2",
                                 "--queries", "10", "--json"])
    assert result.exit_code == 0, result.output
    s = _last_json(result.stdout)
    assert s["kms_calls_while_querying"] == 0  # warm key cache: no KMS round trip on the hot path
    assert s["fields_opened_per_request"] > 0 and s["open_ms_per_request"] > 0
    assert len(s["pairs_p95_sealed"]) == len(s["pairs_p95_plain"]) == 2


def test_bench_pii_json() -> None:
    result = runner.invoke(app, ["bench", "pii", "--size", "60", "--json"])
    assert result.exit_code == 0, result.output
    s = _last_json(result.stdout)
    write = s["write"]
    assert write["structured_recall"] >= 0.95 and write["per_type"]["PERSON"]["recall"] >= 0.8
    assert set(write["per_type"]) >= {"PERSON", "IBAN", "NIR", "PHONE", "EMAIL", "CARD"}
    assert 0 < s["cost"]["batch_of_50_per_text_ms"] < 50 and s["texts"] == 72  # 60 filled + 12 decoys


@pytest.mark.slow  # the spaCy model loads, then 280 texts: about 10 s here
def test_bench_pii_data_reports_what_survives_in_the_embedded_text(tmp_path: Path) -> None:
    """Generated evasive spellings (check digits valid) and the French and English names set: nothing
    of the checksum and pattern types survives, and names' recall is at least 0.95."""
    from tests.support.pii_spellings import corpus

    spellings = tmp_path / "spellings.json"
    spellings.write_text(json.dumps(corpus(20)), encoding="utf-8")
    result = runner.invoke(app, ["bench", "pii", "--data", str(spellings), "--json"])
    assert result.exit_code == 0, result.output
    s: dict[str, Any] = _last_json(result.stdout)
    assert s["values"] == 140 and s["survived"] == 0, s["survivors"]
    assert set(s["by_type"]) == {"IBAN", "NIR", "PHONE", "CARD", "EMAIL", "PLATE", "BIRTHDATE"}
    assert all(v == {"values": 20, "survived": 0, "recall": 1.0} for v in s["by_type"].values())
    names = Path(__file__).parents[1] / "data" / "pii" / "names_fr_en.json"
    result = runner.invoke(app, ["bench", "pii", "--data", str(names), "--json"])
    assert result.exit_code == 0, result.output
    named: dict[str, Any] = _last_json(result.stdout)
    assert named["by_type"]["PERSON"]["recall"] >= 0.95 and named["names_precision"] >= 0.95


@pytest.mark.parametrize(("content", "message"), [
    (None, "cannot be read"), ("{not json", "not a JSON file"), ('{"text": "x"}', "expected a JSON list"),
    ('[{"values": ["x"]}]', 'item 0 is not an object with a "text" string'),
    ('[{"text": "x", "values": "FR76"}]', '"values" must be a list'),
])  # fmt: skip
def test_bench_pii_data_refuses_a_bad_file(tmp_path: Path, content: str | None, message: str) -> None:
    data = tmp_path / "corpus.json"
    if content is not None:
        data.write_text(content, encoding="utf-8")
    result = runner.invoke(app, ["bench", "pii", "--data", str(data), "--json"])
    flat = " ".join(result.output.replace("│", " ").split())  # the error box may wrap a long path
    assert result.exit_code == 2 and message in flat, result.output
    assert "Traceback" not in result.output


@pytest.mark.slow  # two stacks come up (the seeding one, then `carnet serve`): about 50 s here
def test_bench_load_json_counts_refusals_by_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # One slot and no waiting room on the spawned server (it inherits the environment): the second rate
    # is far over what one slot serves, so some requests are refused, 503 overloaded, and none waits.
    monkeypatch.setenv("CARNET_API__MAX_CONCURRENCY", "1")
    monkeypatch.setenv("CARNET_API__MAX_QUEUE", "0")
    # The client waits up to a minute: on a CI machine running three test workers beside the server, the
    # one request the slot admits once took more than the default 10 s (1 timeout of 200, fast rate); a
    # request hung for a minute still fails the test.
    result = runner.invoke(app, ["bench", "load", "--rate", "4,100", "--seconds", "2", "--subjects", "3",
                                 "--memories", "30", "--write-share", "0.3", "--store", str(tmp_path / "s"),
                                 "--recovery", "2", "--turns", "2", "--timeout", "60", "--json"])
    assert result.exit_code == 0, result.output
    s = _last_json(result.stdout)
    assert s["machine"] and len(s["load_average"]) == 3
    assert s["turns"] == 2 and "questions in calls of 2 about one member" in result.stdout
    slow, fast = s["rates"]  # type: ignore[misc]
    assert slow["offered_per_s"] == 4.0 and slow["sent"] == 8 and slow["p95_ms"] > 0
    assert slow["ok"] < 8 or slow["achieved_per_s"] > 3  # over its own 2 s, not the recovery run after it
    for r in (slow, fast):
        refused = sum(r["refused"].values())
        assert r["ok"] + refused + r["timeouts"] + r["transport_errors"] == r["sent"]
        assert set(r["refused"]) <= {"503 overloaded"} and r["timeouts"] == 0
        assert {"p50_ms", "p95_ms", "p99_ms", "achieved_per_s", "by_kind", "send_lag_p99_ms"} <= set(r)
    assert fast["sent"] == 200 and fast["refused"].get("503 overloaded", 0) > 0
    assert "assemble" in fast["by_kind"]
    for r in (slow, fast):  # the CPU each process spent per answered request (this rate and its recovery)
        cpu = r["cpu"]
        assert cpu["served"] >= r["ok"] and cpu["cores"] >= 1 and cpu["cores_busy"] >= 0
        assert cpu["server_ms"] > 0 and cpu["children_ms"] is not None and cpu["generator_ms"] > 0
        assert cpu["cpu_bound_per_s"] > 0
    assert "cpu per answered request: server" in result.stdout
    for r in (slow, fast):  # each rate is followed by two seconds at the first rate, cut into windows
        back = r["recovery"]
        assert back["rate"] == 4.0 and back["reference_p95_ms"] == slow["p95_ms"]
        assert [w["sent"] for w in back["windows"]] == [4, 4]
        t = back["recovered_after_s"]
        assert t is None or all(w["normal"] for w in back["windows"][t:])
        assert all(w["ok"] <= w["sent"] and ("p95_ms" in w) for w in back["windows"])


def test_bench_load_refuses_bad_rates() -> None:
    result = runner.invoke(app, ["bench", "load", "--rate", "10,abc"])
    assert result.exit_code == 2 and "--rate" in result.output
