"""``bench scenarios``' result: the JSON summary (the last line with ``--json``) and the rich lines.

A share with nothing to count in the file (no supersession, no ``not_old`` query, no call) is ``null``,
never 1.0; ``noise`` and ``facts_per_call`` are ``null`` with ``--from facts`` (the records are the
file's facts).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.table import Table

from carnet.bench.report import emit_json, machine
from carnet.bench.scenarios_calls import CallStats
from carnet.bench.scenarios_measures import Scores


@dataclass
class Run:
    source: str
    scores: Scores
    calls: CallStats = field(default_factory=CallStats)
    file_facts: int = 0  # the file's facts, to compare facts_per_call with
    leaks: int = 0
    seconds: float = 0.0


def share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def summary(r: Run) -> dict[str, Any]:
    s, calls = r.scores, r.source == "calls"
    return {
        "from": r.source,
        "recall_at_3": share(s.hits, s.queries),
        "hits": s.hits,
        "queries": s.queries,
        "expected_said": s.said if calls else None,
        "recall_at_3_said": share(s.said_hits, s.said) if calls else None,
        "said_basis": s.said_basis if calls else None,
        "by_kind": {
            k: {"recall_at_3": share(h, n), "hits": h, "queries": n} for k, (h, n) in sorted(s.by_kind.items())
        },
        "superseded_hidden": share(s.superseded_hidden, s.superseded_checked),
        "superseded_hidden_count": s.superseded_hidden,
        "superseded_checked": s.superseded_checked,
        "superseded_total": s.superseded_total,
        "superseded_unmapped": s.superseded_unmapped,
        "superseded_status": share(s.status_hidden, s.status_checked),
        "superseded_status_count": s.status_hidden,
        "stale": share(s.stale_found, s.stale_checked),
        "stale_queries": s.stale_found,
        "stale_checked": s.stale_checked,
        "false_superseded": s.false_superseded,
        "false_superseded_kept": s.false_superseded_kept,
        "records": s.fact_records,
        "episodes": s.episodes,
        "calls": r.calls.calls if calls else None,
        "dead_intakes": r.calls.dead if calls else None,
        "facts_per_call": share(s.fact_records, r.calls.calls) if calls else None,
        "file_facts_per_call": share(r.file_facts, r.calls.calls) if calls else None,
        "noise": share(s.noise_records, s.fact_records) if calls else None,
        "noise_records": s.noise_records if calls else None,
        "leaks": r.leaks,
        "misses": [*r.calls.problems, *s.misses],
        "seconds": round(r.seconds, 1),
        "machine": machine(),
    }


def _fmt(value: float | None, part: int, whole: int) -> str:
    return f"{value:.3f}  ({part}/{whole})" if value is not None else f"n/a    ({part}/{whole})"


def show(r: Run, *, json_out: bool) -> None:
    out, s = summary(r), r.scores
    console = Console(highlight=False)
    console.print(
        f"from {r.source}: {s.queries} queries, {s.fact_records} fact records, {s.episodes} episodes"
        + (f", {r.calls.calls} calls ({r.calls.dead} dead intakes)" if r.source == "calls" else "")
    )
    console.print(f"recall@3           {_fmt(out['recall_at_3'], s.hits, s.queries)}")
    if r.source == "calls":
        basis = ("judged on said_any, the calls' words" if s.said_basis == "said_any"
                 else "queries whose expected words are said in the calls")
        console.print(f"  expected said    {_fmt(out['recall_at_3_said'], s.said_hits, s.said)}  ({basis})")
    console.print(
        f"superseded hidden  {_fmt(out['superseded_hidden'], s.superseded_hidden, s.superseded_checked)}"
        f"  from searches; {s.superseded_unmapped} pair(s) left no record"
    )
    console.print(f"superseded status  {_fmt(out['superseded_status'], s.status_hidden, s.status_checked)}")
    console.print(f"stale              {_fmt(out['stale'], s.stale_found, s.stale_checked)}")
    kept = s.false_superseded_kept
    console.print(f"false superseded   {s.false_superseded} ({kept} of them still said by an active record)")
    if r.source == "calls":
        console.print(f"facts per call     {out['facts_per_call']} (the file: {out['file_facts_per_call']})")
        console.print(f"noise              {_fmt(out['noise'], s.noise_records, s.fact_records)}")
    console.print(f"cross-tenant leaks {r.leaks}")
    table = Table("kind", "recall@3", "hits", "queries")
    for kind, row in out["by_kind"].items():
        table.add_row(kind, f"{row['recall_at_3']:.3f}", str(row["hits"]), str(row["queries"]))
    console.print(table)
    for miss in out["misses"]:
        console.print(f"  miss: {miss}", markup=False, soft_wrap=True)
    if json_out:
        emit_json(out)
