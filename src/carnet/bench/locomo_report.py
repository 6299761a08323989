"""The LoCoMo run's report on the terminal: what was ingested, recall@k per category and conversation, latency."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from carnet.bench.locomo_data import CATEGORIES


def print_report(out: Any, summary: dict[str, Any], ks: Sequence[int]) -> None:
    from rich.table import Table

    out.print(
        f"ingested {summary['turns']} turns of {summary['conversations']} conversations in "
        f"{summary['ingest_s']} s: created {summary['created']}, merged {summary['merged']}, "
        f"superseded {summary['superseded']}, unchanged {summary['unchanged']}"
    )
    out.print(f"questions {summary['questions']} (categories 1-4), "
              f"skipped {summary['skipped_no_evidence']} without valid evidence")
    table = Table(title="LoCoMo recall@k")
    table.add_column("category")
    for k in ks:
        table.add_column(f"@{k}", justify="right")
    table.add_row("all", *(f"{summary[f'recall@{k}']:.3f}" for k in ks))
    for cat, rec in summary["by_category"].items():
        table.add_row(f"{cat} {CATEGORIES[int(cat)]}", *(f"{rec[f'recall@{k}']:.3f}" for k in ks))
    for conv, rec in summary["by_conversation"].items():
        table.add_row(conv, *(f"{rec[f'recall@{k}']:.3f}" for k in ks))
    out.print(table)
    out.print(f"search latency p50 {summary['p50_ms']} ms, p95 {summary['p95_ms']} ms, "
              f"p99 {summary['p99_ms']} ms; query cache hit rate {summary['query_cache_hit_rate']}")
