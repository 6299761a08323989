"""Asking LoCoMo's questions through the real read path (``recall.search``) and counting hits at k.

A question is a hit at k when one of its evidence turns is among the sources of the top-k records (a
merged record carries several sources: any of them counts).
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from carnet.bench.locomo_data import CATEGORIES, Conversation


@dataclass(slots=True)
class _Tally:
    hits: Counter[int]
    asked: int = 0

    def recall(self, ks: Sequence[int]) -> dict[str, float]:
        return {f"recall@{k}": round(self.hits[k] / self.asked, 4) if self.asked else 0.0 for k in ks}


def ask(deps: Any, tenant: str, conversations: Sequence[Conversation], ks: Sequence[int], err: Any) -> dict[str, Any]:
    from carnet.bench.report import percentiles
    from carnet.services.memories.recall import Query, search

    overall = _Tally(Counter())
    by_cat: dict[int, _Tally] = defaultdict(lambda: _Tally(Counter()))
    by_conv: dict[str, _Tally] = defaultdict(lambda: _Tally(Counter()))
    latencies: list[float] = []
    skipped = 0
    for conv in conversations:
        for q in conv.questions:
            if q.category not in CATEGORIES:
                continue
            if not q.evidence:
                skipped += 1
                continue
            t0 = time.perf_counter()
            query = Query(text=q.text, k=ks[-1])
            ranked = search(deps, tenant=tenant, subject_id=conv.sample_id, query=query)
            latencies.append((time.perf_counter() - t0) * 1000)
            first = _first_hit(ranked, frozenset(q.evidence))
            for tally in (overall, by_cat[q.category], by_conv[conv.sample_id]):
                tally.asked += 1
                for k in ks:
                    if first is not None and first < k:
                        tally.hits[k] += 1
        err.print(f"asked {conv.sample_id}: {overall.asked} questions so far")
    return {
        "overall": overall.recall(ks),
        "by_category": {str(c): by_cat[c].recall(ks) for c in sorted(by_cat)},
        "by_conversation": {c: t.recall(ks) for c, t in by_conv.items()},
        "questions": overall.asked,
        "skipped": skipped,
        **percentiles(latencies),
    }


def _first_hit(ranked: Sequence[Any], evidence: frozenset[str]) -> int | None:
    """Rank (0-based) of the first record one of whose sources is an evidence turn."""
    for rank, r in enumerate(ranked):
        if any(s.ref in evidence for s in r.memory.sources):
            return rank
    return None
