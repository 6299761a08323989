"""``carnet bench scenarios``: French call-center scenarios through the REST API of a temporary server.

Rules (the file's ``about``): per subject, in order, the history is written, then each query's top-3
must contain one of ``expect_any``; a fact named by ``not_old`` was superseded and must not come back;
each ``superseded`` pair must leave ``old`` hidden; cross-tenant probes must get nothing of another tenant.

``--from facts`` (the default) stores each fact as written (``POST …/memories``): fact ``i`` is the
record the API answers. ``--from calls`` posts each of the subject's ``calls`` to ``POST …/messages``
and waits for its intake (``scenarios_calls``): the whole write path, with the rule extractor and the
server's own workers; facts are then found among the extracted records by shared content words
(``scenarios_match``). The measures are defined in ``scenarios_measures``.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import httpx

from carnet.bench import scenarios_calls
from carnet.bench.report import progress
from carnet.bench.scenarios_calls import MAX_MESSAGES
from carnet.bench.scenarios_match import Weights
from carnet.bench.scenarios_measures import (
    Scores,
    View,
    judge,
    score_queries,
    score_records,
    score_superseded,
    view_by_id,
    view_by_words,
)
from carnet.bench.scenarios_report import Run, show
from carnet.ports.llm import Extractor

__all__ = ["Source", "Tally", "count_leaks", "evaluate", "judge", "measure", "run"]

Source = Literal["facts", "calls"]


@dataclass
class Tally:
    """``carnet bench extract``'s counters (this command's are ``scenarios_measures.Scores``)."""

    queries: int = 0
    hits: int = 0
    superseded_total: int = 0
    superseded_hidden: int = 0
    leaks: int = 0
    misses: list[str] = field(default_factory=list)


def run(*, data: Path, json_out: bool, source: Source = "facts", judge_path: Path | None = None,
        extractor: Extractor | None = None, per_post: int = MAX_MESSAGES) -> None:
    show(measure(data=data, source=source, judge_path=judge_path, extractor=extractor, per_post=per_post),
         json_out=json_out)


def measure(*, data: Path, source: Source = "facts", judge_path: Path | None = None,
            extractor: Extractor | None = None, per_post: int = MAX_MESSAGES) -> Run:
    """One file through a temporary embedded server; ``extractor`` (``--from calls``): the one the
    server's workers use; by default the configured one, as ``carnet serve`` builds it (the rule
    extractor with the shipped turn filter, or the LLM with ``CARNET_EXTRACTOR=mistral``). From facts, an
    extractor that judges contradictions (an LLM) judges the explicit writes (``wiring.attach_judge``)."""
    from carnet.bootstrap.wiring import attach_judge, build, start_workers
    from carnet.entrypoints.http.app import create_app
    from carnet.entrypoints.http.server import running
    from carnet.services.apikeys import create_key
    from carnet.settings.root import Settings

    spec = json.loads(data.read_text(encoding="utf-8"))
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="carnet-scenarios-") as tmp:
        container = build(Settings(data_dir=Path(tmp) / "data", locale="fr", judge_path=judge_path))
        try:
            if source == "calls":  # as `carnet serve` does
                start_workers(container, extractor=extractor)
            elif extractor is not None and extractor.judges_contradictions:  # from facts: its judgment of writes
                attach_judge(container, extractor)
            keys = {
                t: create_key(container.deps.catalog, container.pepper, tenant=t, roles=["agent"])[0]
                for t in spec["tenants"]
            }
            with running(create_app(container)) as base:
                result = evaluate(base, keys, spec, source=source, per_post=per_post)
        finally:
            container.close()
    result.seconds = time.perf_counter() - started
    return result


def evaluate(base: str, keys: dict[str, str], spec: dict[str, Any], *, source: Source = "facts",
             per_post: int = MAX_MESSAGES) -> Run:
    result = Run(source=source, scores=Scores())
    weights = Weights.of(
        f["text"] for t in spec["tenants"].values() for s in t["subjects"].values() for f in s["facts"]
    )
    owned: dict[str, set[str]] = {}
    for tenant, tdata in spec["tenants"].items():
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {keys[tenant]}"}, timeout=60) as http:
            owned[tenant] = set()
            for subject, sdata in tdata["subjects"].items():
                view = _write(http, result, tenant, subject, sdata, weights, per_post)
                owned[tenant].update(view.records)
                said = _said(sdata) if source == "calls" else None
                _measure(http, result.scores, subject, sdata, view, said)
    for probe in spec.get("cross_tenant_probes", []):
        result.leaks += _probe(base, keys[probe["tenant"]], probe, owned)
    return result


def _write(http: httpx.Client, result: Run, tenant: str, subject: str, sdata: dict[str, Any], weights: Weights,
           per_post: int = MAX_MESSAGES) -> View:
    facts = [f["text"] for f in sdata["facts"]]
    result.file_facts += len(facts)
    if result.source == "facts":
        progress(f"storing {len(facts)} facts for {tenant}/{subject}")
        ids = [_store(http, subject, fact) for fact in sdata["facts"]]
        return view_by_id(scenarios_calls.records(http, subject), ids)
    calls = scenarios_calls.calls_of(sdata)
    progress(f"posting {len(calls)} calls for {tenant}/{subject}")
    scenarios_calls.tell(http, subject, calls, result.calls, per_post=per_post)
    return view_by_words(scenarios_calls.records(http, subject), facts, weights)


def _said(sdata: dict[str, Any]) -> str:
    """Everything said in the subject's calls, lower-cased."""
    return "\n".join(m["content"] for c in scenarios_calls.calls_of(sdata) for m in c["messages"]).lower()


def _measure(http: httpx.Client, scores: Scores, subject: str, sdata: dict[str, Any], view: View,
             said: str | None) -> None:
    def search(q: str) -> Sequence[tuple[str, str]]:
        return [(res["memory"]["id"], res["memory"]["text"]) for res in _search(http, subject, q)]

    score_queries(scores, subject, sdata.get("queries", []), view, search, said=said)
    score_superseded(scores, subject, sdata, view, search)
    score_records(scores, sdata, view)


def _store(http: httpx.Client, subject: str, fact: dict[str, Any]) -> str:
    r = http.post(f"/api/v1/subjects/{subject}/memories", json={"text": fact["text"], "occurred_at": fact["at"]})
    r.raise_for_status()
    body = r.json()
    return str(body["merged_into"] or body["memory"]["id"])


def _search(http: httpx.Client, subject: str, q: str, k: int = 3) -> list[dict[str, Any]]:
    r = http.post(f"/api/v1/subjects/{subject}/search", json={"query": q, "k": k})
    if r.status_code == 404:
        return []
    r.raise_for_status()
    return list(r.json()["results"])


def _probe(base: str, key: str, probe: dict[str, Any], owned: dict[str, set[str]]) -> int:
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
        results = _search(http, probe["subject"], probe["q"], k=10)
    return count_leaks(probe, [(res["memory"]["id"], res["memory"]["text"]) for res in results], owned)


def count_leaks(probe: dict[str, Any], results: Sequence[tuple[str, str]], owned: dict[str, set[str]]) -> int:
    """Records of another tenant (or forbidden strings) in a cross-tenant probe's (id, text) results."""
    foreign = set().union(*(ids for t, ids in owned.items() if t != probe["tenant"]))
    leaks = sum(1 for mid, _ in results if mid in foreign)
    texts = " ".join(text for _, text in results)
    leaks += sum(1 for s in probe.get("must_not_contain", []) if s in texts)
    if "must_return" in probe and len(results) > probe["must_return"]:
        leaks += sum(1 for mid, _ in results if mid not in owned[probe["tenant"]])
    return leaks
