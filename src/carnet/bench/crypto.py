"""``carnet bench crypto``: what sealing records costs ``assemble``, measured A/B.

Two stores are built from the same synthetic memories: A seals every record (the default), B writes the
same records through the bare vector store (no encryption: a benchmark-only arm, never a setting).
Then ``pairs`` rounds of ``queries`` assemble calls each run on A and on B with the same questions, the
order alternating (A-B, B-A, …) so drift on a shared machine hits both arms alike. Reported: p50/p95
per arm (median over pairs), the p95 overhead, the time spent opening fields inside each request, and
the KMS calls made while querying (0 when the key cache is warm). The query-embedding cache is off.
"""

from __future__ import annotations

import dataclasses
import random
import statistics
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from carnet.bench.records import TimedOpening
from carnet.bench.report import emit_json, machine, percentiles, progress
from carnet.bench.synthetic import fact, question
from carnet.ports import Kms, WrappedKey

TENANT = "bench"


class CountingKms:
    """A ``Kms`` that counts the calls it forwards."""

    def __init__(self, inner: Kms) -> None:
        self._inner = inner
        self.calls = 0

    def ensure_tenant_key(self, tenant: str) -> None:
        self.calls += 1
        self._inner.ensure_tenant_key(tenant)

    def generate_data_key(self, tenant: str) -> tuple[bytes, WrappedKey]:
        self.calls += 1
        return self._inner.generate_data_key(tenant)

    def unwrap(self, wrapped: WrappedKey) -> bytes:
        self.calls += 1
        return self._inner.unwrap(wrapped)

    def rotate(self, tenant: str) -> int:
        self.calls += 1
        return self._inner.rotate(tenant)

    def rewrap(self, wrapped: Sequence[WrappedKey]) -> list[WrappedKey]:
        self.calls += 1
        return self._inner.rewrap(wrapped)

    def latest_version(self, tenant: str) -> int:
        self.calls += 1
        return self._inner.latest_version(tenant)

    def set_min_decryption_version(self, tenant: str, version: int) -> None:
        self.calls += 1
        self._inner.set_min_decryption_version(tenant, version)

    def destroy_tenant_key(self, tenant: str) -> bool:
        self.calls += 1
        return self._inner.destroy_tenant_key(tenant)

    def check(self) -> None:
        self._inner.check()


def run(*, memories: int, subjects: int, pairs: int, queries: int, json_out: bool) -> None:
    from carnet.bench.records import PlainRecords
    from carnet.bootstrap.keys import build_kms
    from carnet.bootstrap.wiring import build
    from carnet.crypto.sealed_index import SealedIndex
    from carnet.settings.root import Settings

    with tempfile.TemporaryDirectory(prefix="carnet-crypto-") as tmp:
        root = Path(tmp)
        settings = {name: Settings(data_dir=root / name / "data", key_dir=root / name / "keys", query_cache_size=0)
                    for name in ("sealed", "plain")}
        kms = CountingKms(build_kms(settings["sealed"]))
        sealed = build(settings["sealed"], kms=kms)
        plain_c = build(settings["plain"], embedder=sealed.deps.embedder.inner)
        try:
            assert isinstance(sealed.deps.index, SealedIndex) and isinstance(plain_c.deps.index, SealedIndex)
            timed = TimedOpening(sealed.deps.index)
            arms = {"sealed": dataclasses.replace(sealed.deps, index=timed),
                    "plain": dataclasses.replace(plain_c.deps, index=PlainRecords(plain_c.deps.index.inner))}
            for name, deps in arms.items():
                progress(f"ingesting {memories} memories into the {name} store")
                _ingest(deps, memories, subjects)
            summary = _measure(arms, timed, kms, subjects=subjects, pairs=pairs, queries=queries)
        finally:
            sealed.close()
            plain_c.close()
    summary.update({"memories": memories, "subjects": subjects, "pairs": pairs, "queries_per_arm": queries,
                    "machine": machine()})
    _print(summary)
    if json_out:
        emit_json(summary)


def _ingest(deps: Any, memories: int, subjects: int) -> None:
    from carnet.services.memories.remember import NewMemory, remember

    rng = random.Random(7)
    base = datetime(2024, 1, 1, tzinfo=UTC)
    per = max(1, memories // subjects)
    for s in range(subjects):
        for start in range(0, per, 50):
            items = [NewMemory(text=fact(rng), occurred_at=base + timedelta(hours=rng.randint(0, 16000)))
                     for _ in range(min(50, per - start))]
            remember(deps, tenant=TENANT, subject_id=f"sub-{s:05d}", items=items, actor="bench")


def _measure(arms: dict[str, Any], sealed_index: TimedOpening, kms: CountingKms, *, subjects: int, pairs: int,
             queries: int) -> dict[str, Any]:
    from carnet.services.memories.assemble import assemble, budgets

    p50: dict[str, list[float]] = {"sealed": [], "plain": []}
    p95: dict[str, list[float]] = {"sealed": [], "plain": []}
    for deps in arms.values():  # warm both: keys cached, pages in memory
        for i in range(20):
            assemble(deps, tenant=TENANT, subject_id=f"sub-{i % subjects:05d}", query=question(random.Random(i), i),
                     budget=budgets(deps, overrides={}))
    kms_before, open_s, opened = kms.calls, sealed_index.open_seconds, sealed_index.opened
    for pair in range(pairs):
        rng = random.Random(100 + pair)
        asks = [(f"sub-{rng.randrange(subjects):05d}", question(rng, 10_000 * pair + i)) for i in range(queries)]
        order = ("sealed", "plain") if pair % 2 == 0 else ("plain", "sealed")
        for name in order:
            deps = arms[name]
            b = budgets(deps, overrides={})
            samples = []
            for subject, q in asks:
                t0 = time.perf_counter()
                assemble(deps, tenant=TENANT, subject_id=subject, query=q, budget=b)
                samples.append((time.perf_counter() - t0) * 1000)
            p = percentiles(samples)
            p50[name].append(p["p50_ms"])
            p95[name].append(p["p95_ms"])
        progress(f"pair {pair + 1}/{pairs}: p95 sealed {p95['sealed'][-1]} ms, plain {p95['plain'][-1]} ms")
    sealed_p95, plain_p95 = statistics.median(p95["sealed"]), statistics.median(p95["plain"])
    requests = pairs * queries
    return {
        "sealed_p50_ms": round(statistics.median(p50["sealed"]), 3), "sealed_p95_ms": round(sealed_p95, 3),
        "plain_p50_ms": round(statistics.median(p50["plain"]), 3), "plain_p95_ms": round(plain_p95, 3),
        "p95_overhead_pct": round(100 * (sealed_p95 - plain_p95) / plain_p95, 2),
        "pairs_p95_sealed": p95["sealed"], "pairs_p95_plain": p95["plain"],
        "open_ms_per_request": round(1000 * (sealed_index.open_seconds - open_s) / requests, 4),
        "fields_opened_per_request": round((sealed_index.opened - opened) / requests, 1),
        "kms_calls_while_querying": kms.calls - kms_before,
    }


def _print(s: dict[str, Any]) -> None:
    print(f"machine: {s['machine']}; {s['memories']} memories, {s['subjects']} subjects, "
          f"{s['pairs']} A/B pairs of {s['queries_per_arm']} assemble calls")
    print(f"sealed: p50 {s['sealed_p50_ms']} ms, p95 {s['sealed_p95_ms']} ms")
    print(f"plain:  p50 {s['plain_p50_ms']} ms, p95 {s['plain_p95_ms']} ms")
    print(f"p95 overhead {s['p95_overhead_pct']} %; opening fields {s['open_ms_per_request']} ms per request "
          f"({s['fields_opened_per_request']} fields); KMS calls while querying: {s['kms_calls_while_querying']}")
