"""``carnet bench profile``: does the profile tier put the answer in front of the assistant?

The scenario file's facts are stored one by one, in order, per subject, through the service layer of a
temporary embedded stack. For every query, three outputs are judged with the rules of
``bench scenarios`` (one of ``expect_any`` in a text; a ``not_old`` fact shown is stale): search's
top 3, assemble's profile tier alone, and all of assemble's output (profile tier + ranked facts).
Per query ``kind``, the hits of each (a hit is found and not stale), plus how many stored facts were
flagged as profile records and what the tier costs (records and tokens per context).
"""

from __future__ import annotations

import json
import tempfile
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.console import Console

from carnet.bench.report import emit_json, progress
from carnet.bench.scenarios import judge

OUTPUTS = ("search_top3", "profile", "assemble")


def run(*, data: Path, json_out: bool, compare: bool = False) -> None:
    from carnet.bootstrap.models import build_embedder
    from carnet.bootstrap.wiring import build
    from carnet.settings.root import Settings

    spec = json.loads(data.read_text(encoding="utf-8"))
    if compare:
        from carnet.bench.profile_classifiers import compare as compare_classifiers

        result = compare_classifiers(build_embedder(Settings(data_dir=Path(tempfile.gettempdir()))), spec)
        Console().print(result)
        if json_out:
            emit_json(result)
        return
    with tempfile.TemporaryDirectory(prefix="carnet-profile-") as tmp:
        container = build(Settings(data_dir=Path(tmp) / "data", locale="fr"))
        try:
            summary = evaluate(container.deps, spec)
        finally:
            container.close()
    _print(summary, json_out)


def evaluate(deps: Any, spec: dict[str, Any]) -> dict[str, Any]:
    from carnet.services.memories import recall
    from carnet.services.memories.assemble import assemble, budgets
    from carnet.services.memories.remember import NewMemory, remember

    hits: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(("queries", *OUTPUTS), 0))
    facts = flagged = 0
    tier_records: list[int] = []
    tier_tokens: list[int] = []
    misses: list[dict[str, Any]] = []
    for tenant, tdata in spec["tenants"].items():
        for subject, sdata in tdata["subjects"].items():
            progress(f"storing {len(sdata['facts'])} facts for {tenant}/{subject}")
            ids = []
            for fact in sdata["facts"]:
                (o,) = remember(
                    deps,
                    tenant=tenant,
                    subject_id=subject,
                    actor="bench",
                    items=[NewMemory(text=fact["text"], occurred_at=datetime.fromisoformat(fact["at"]))],
                )
                ids.append(o.memory.id)
                facts += 1
                flagged += int(o.memory.profile)
            for query in sdata.get("queries", []):
                old = query.get("not_old")
                old_ids = {ids[old]} if old is not None else set()
                found = recall.search(deps, tenant=tenant, subject_id=subject, query=recall.Query(query["q"], k=3))
                ctx = assemble(
                    deps, tenant=tenant, subject_id=subject, query=query["q"], budget=budgets(deps, overrides={})
                )
                tier_records.append(len(ctx.profile))
                tier_tokens.append(int(ctx.stats["profile_tokens"]))
                shown = {
                    "search_top3": [(r.memory.id, r.memory.text) for r in found],
                    "profile": [(m.id, m.text) for m in ctx.profile],
                    "assemble": [(m.id, m.text) for m in ctx.profile]
                    + [(r.memory.id, r.memory.text) for r in ctx.memories],
                }
                judged = {o: judge(query, results, old_ids=old_ids) for o, results in shown.items()}
                for kind in (query.get("kind", "untyped"), "all"):
                    hits[kind]["queries"] += 1
                    for output, (ok, stale) in judged.items():
                        hits[kind][output] += int(ok and not stale)
                ok, stale = judged["assemble"]
                if not ok or stale:
                    misses.append(
                        {"subject": subject, "q": query["q"], "kind": query.get("kind"), "found": ok, "stale": stale}
                    )
    n = len(tier_records)
    return {
        "by_kind": {k: v for k, v in sorted(hits.items())},
        "facts": facts,
        "facts_flagged_profile": flagged,
        "profile_records_mean": round(sum(tier_records) / n, 2) if n else None,
        "profile_tokens_mean": round(sum(tier_tokens) / n, 1) if n else None,
        "misses": misses,  # assemble's: the answer not in its output, or a superseded fact in it
    }


def _print(summary: dict[str, Any], json_out: bool) -> None:
    console = Console()
    console.print(
        f"facts flagged as profile: {summary['facts_flagged_profile']}/{summary['facts']}; "
        f"tier per context: {summary['profile_records_mean']} records, "
        f"{summary['profile_tokens_mean']} tokens"
    )
    for kind, row in summary["by_kind"].items():
        cells = ", ".join(f"{o} {row[o]}/{row['queries']}" for o in OUTPUTS)
        console.print(f"{kind:>14}: {cells}")
    if json_out:
        emit_json(summary)
