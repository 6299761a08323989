"""Latency of ``EdgeVectorIndex.hybrid_search`` on a scoped (subject-filtered) query.

Fills a fresh shard with random unit vectors and Zipf-distributed sparse tokens, spread evenly over
``--subjects`` subjects of one tenant, then times hybrid searches (dense + sparse, one ``query_batch``,
vectors returned, active and not-expired records only) for random subjects, before and after
``optimize()``. Prints p50/p95/p99 in milliseconds.

    python scripts/bench_edge_filter.py --points 100000 --subjects 1000
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from carnet.adapters.vectors.qdrant_edge import EdgeVectorIndex
from carnet.domain.records import Kind, Memory, Scope, point_id
from carnet.ports import IndexedMemory, RecordFilter, SparseVector

NOW = datetime.now(UTC)


def sparse(rng: np.random.Generator, n: int) -> SparseVector:
    tokens = sorted({int(t) for t in rng.zipf(1.3, n) % 2**31})
    return SparseVector(tokens, [float(rng.integers(1, 3)) for _ in tokens])


def fill(index: EdgeVectorIndex, scopes: list[Scope], per_scope: int, dim: int, rng: np.random.Generator) -> None:
    for s, scope in enumerate(scopes):
        vectors = rng.standard_normal((per_scope, dim)).astype(np.float32)
        items = []
        for i in range(per_scope):
            m = Memory(
                id=point_id(scope, str(i)),
                scope=scope,
                kind=Kind.FACT,
                text="x" * 200,
                pseudo_text="y" * 120,
                recorded_at=NOW,
                valid_from=NOW,
                updated_at=NOW,
                expires_at=NOW + timedelta(days=365) if i % 2 else None,
            )
            items.append(IndexedMemory(m, vectors[i], sparse(rng, 12)))
        index.upsert(scope, items)
        if s % 100 == 99:
            print(f"  {(s + 1) * per_scope} points", flush=True)


def measure(
    index: EdgeVectorIndex,
    scopes: list[Scope],
    dim: int,
    n: int,
    rng: np.random.Generator,
    *,
    limit: int,
    with_sparse: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Wall-clock and process-CPU milliseconds per call (CPU time ignores waiting for a busy CPU)."""
    where = RecordFilter(not_expired_at=NOW)
    wall, cpu = [], []
    for _ in range(n):
        scope = scopes[int(rng.integers(len(scopes)))]
        query = rng.standard_normal(dim).astype(np.float32)
        sq = sparse(rng, 5) if with_sparse else None
        t0, c0 = time.perf_counter(), time.process_time()
        index.hybrid_search(scope, dense=query, sparse=sq, limit=limit, where=where, with_vectors=True)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return np.array(wall) * 1000, np.array(cpu) * 1000


def report(label: str, measured: tuple[np.ndarray, np.ndarray]) -> None:
    for kind, ms in zip(("wall", "cpu"), measured, strict=True):
        p50, p95, p99 = np.percentile(ms, [50, 95, 99])
        print(f"{label:38s} {kind:4s} p50 {p50:.3f}  p95 {p95:.3f}  p99 {p99:.3f} ms  (n={len(ms)})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--points", type=int, default=100_000)
    ap.add_argument("--subjects", type=int, default=1000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--limit", type=int, default=20, help="hits asked per retriever")
    ap.add_argument("--no-optimize", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    scopes = [Scope("bench", f"h-{i:05d}") for i in range(args.subjects)]
    selectivity = 100 / args.subjects
    with tempfile.TemporaryDirectory() as tmp:
        index = EdgeVectorIndex(Path(tmp) / "vectors", args.dim)
        try:
            print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
            t0 = time.perf_counter()
            fill(index, scopes, args.points // args.subjects, args.dim, rng)
            print(f"ingest {args.points} points: {time.perf_counter() - t0:.1f} s")
            measure(index, scopes, args.dim, 200, rng, limit=args.limit)  # warm-up
            tag = f"{selectivity:g}% sel., limit {args.limit}"
            report(f"hybrid, {tag}, unoptimized", measure(index, scopes, args.dim, args.queries, rng, limit=args.limit))
            report(
                f"dense only, {tag}, unoptimized",
                measure(index, scopes, args.dim, args.queries, rng, limit=args.limit, with_sparse=False),
            )
            if not args.no_optimize:
                t0 = time.perf_counter()
                index.optimize()
                print(f"optimize: {time.perf_counter() - t0:.1f} s (holds the GIL)")
                measure(index, scopes, args.dim, 200, rng, limit=args.limit)
                report(
                    f"hybrid, {tag}, optimized", measure(index, scopes, args.dim, args.queries, rng, limit=args.limit)
                )
        finally:
            index.close()


if __name__ == "__main__":
    main()
