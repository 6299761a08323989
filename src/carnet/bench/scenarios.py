"""``carnet bench scenarios``: French call-center scenarios through the REST API of a temporary server.

Rules (the file's ``about``): facts are stored one by one, in order, per subject; then each query's
top-3 must contain one of ``expect_any``; a fact named by ``not_old`` was superseded and must not come
back; each ``superseded`` pair must leave ``old`` with status superseded; cross-tenant probes must get
nothing of another tenant.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console

from carnet.bench.report import emit_json, progress


@dataclass
class Tally:
    queries: int = 0
    hits: int = 0
    superseded_total: int = 0
    superseded_hidden: int = 0
    leaks: int = 0
    misses: list[str] = field(default_factory=list)


def run(*, data: Path, json_out: bool) -> None:
    from carnet.api.app import create_app
    from carnet.api.server import running
    from carnet.bootstrap import build
    from carnet.config import Settings
    from carnet.services.apikeys import create_key

    spec = json.loads(data.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="carnet-scenarios-") as tmp:
        container = build(Settings(data_dir=Path(tmp) / "data", locale="fr"))
        try:
            keys = {t: create_key(container.deps.catalog, container.pepper, tenant=t, roles=["agent"])[0]
                    for t in spec["tenants"]}
            with running(create_app(container)) as base:
                tally = evaluate(base, keys, spec)
        finally:
            container.close()
    _print(tally, json_out)


def evaluate(base: str, keys: dict[str, str], spec: dict[str, Any]) -> Tally:
    tally = Tally()
    owned: dict[str, set[str]] = {}
    for tenant, tdata in spec["tenants"].items():
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {keys[tenant]}"}, timeout=60) as http:
            owned[tenant] = set()
            for subject, sdata in tdata["subjects"].items():
                progress(f"storing {len(sdata['facts'])} facts for {tenant}/{subject}")
                ids = [_store(http, subject, fact) for fact in sdata["facts"]]
                owned[tenant].update(ids)
                _check_queries(http, tally, subject, sdata, ids)
                _check_superseded(http, tally, subject, sdata, ids)
    for probe in spec.get("cross_tenant_probes", []):
        tally.leaks += _probe(base, keys[probe["tenant"]], probe, owned)
    return tally


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


def _check_queries(http: httpx.Client, tally: Tally, subject: str, sdata: dict[str, Any], ids: list[str]) -> None:
    for query in sdata.get("queries", []):
        tally.queries += 1
        results = _search(http, subject, query["q"])
        old = query.get("not_old")
        found, stale = judge(query, [(res["memory"]["id"], res["memory"]["text"]) for res in results],
                             old_ids={ids[old]} if old is not None else set())
        if found and not stale:
            tally.hits += 1
        else:
            tally.misses.append(f"{subject}: {query['q']} (found={found}, stale={stale})")


def _check_superseded(http: httpx.Client, tally: Tally, subject: str, sdata: dict[str, Any], ids: list[str]) -> None:
    for pair in sdata.get("superseded", []):
        tally.superseded_total += 1
        r = http.get(f"/api/v1/subjects/{subject}/memories/{ids[pair['old']]}")
        r.raise_for_status()
        status = r.json()["status"]
        if status == "superseded":
            tally.superseded_hidden += 1
        else:
            tally.misses.append(f"{subject}: fact {pair['old']} not superseded by {pair['by']} (status {status})")


def _probe(base: str, key: str, probe: dict[str, Any], owned: dict[str, set[str]]) -> int:
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
        results = _search(http, probe["subject"], probe["q"], k=10)
    return count_leaks(probe, [(res["memory"]["id"], res["memory"]["text"]) for res in results], owned)


def judge(query: dict[str, Any], results: Sequence[tuple[str, str]], *, old_ids: AbstractSet[str]) -> tuple[bool, bool]:
    """(one of ``expect_any`` is in a result's text, a result is a superseded fact's record), for
    ``results`` as (id, text) pairs. Shared with ``carnet bench extract``."""
    found = any(e.lower() in text.lower() for _, text in results for e in query["expect_any"])
    stale = any(mid in old_ids for mid, _ in results)
    return found, stale


def count_leaks(probe: dict[str, Any], results: Sequence[tuple[str, str]], owned: dict[str, set[str]]) -> int:
    """Records of another tenant (or forbidden strings) in a cross-tenant probe's (id, text) results."""
    foreign = set().union(*(ids for t, ids in owned.items() if t != probe["tenant"]))
    leaks = sum(1 for mid, _ in results if mid in foreign)
    texts = " ".join(text for _, text in results)
    leaks += sum(1 for s in probe.get("must_not_contain", []) if s in texts)
    if "must_return" in probe and len(results) > probe["must_return"]:
        leaks += sum(1 for mid, _ in results if mid not in owned[probe["tenant"]])
    return leaks


def _print(tally: Tally, json_out: bool) -> None:
    console = Console()
    recall = tally.hits / tally.queries if tally.queries else 0.0
    hidden = tally.superseded_hidden / tally.superseded_total if tally.superseded_total else 1.0
    console.print(f"recall@3           {recall:.3f}  ({tally.hits}/{tally.queries})")
    console.print(f"superseded hidden  {hidden:.3f}  ({tally.superseded_hidden}/{tally.superseded_total})")
    console.print(f"cross-tenant leaks {tally.leaks}")
    for miss in tally.misses:
        console.print(f"  miss: {miss}")
    if json_out:
        emit_json({
            "recall_at_3": round(recall, 4),
            "superseded_hidden": round(hidden, 4),
            "superseded_total": tally.superseded_total,
            "leaks": tally.leaks,
            "queries": tally.queries,
        })
