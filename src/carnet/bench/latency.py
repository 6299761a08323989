"""``carnet bench latency``: ingest throughput, then assemble latency (service layer, then HTTP).

The store may be kept (``--store DIR``) and is reused when it already holds the asked-for load.
HTTP is measured against ``carnet serve`` in a separate process (it owns the shard), over loopback,
with a keep-alive client, one request at a time. Every question is new: the query-embedding cache
hit rate is reported and is 0 for the quoted figures.
"""

from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from carnet.bench.report import emit_json, machine, percentiles
from carnet.bench.served import TENANT, seeded, serving, settings, subject
from carnet.bench.synthetic import question

WARMUP = 20


def run(*, memories: int, subjects: int, queries: int, store: Path | None, json_out: bool, pii: bool = True) -> None:
    with tempfile.TemporaryDirectory(prefix="carnet-latency-") as tmp:
        root = store or Path(tmp)
        summary: dict[str, Any] = {"memories": memories, "subjects": subjects, "machine": machine(), "pii": pii}
        summary.update(_service_phase(root, memories, subjects, queries, pii))
        summary.update(_http_phase(root, subjects, queries, pii))
    _print(summary)
    if json_out:
        emit_json(summary)


def _service_phase(root: Path, memories: int, subjects: int, queries: int, pii: bool) -> dict[str, Any]:
    from carnet.bench.crypto import CountingKms
    from carnet.bootstrap import build, build_kms

    config = settings(root, pii)
    container = build(config, kms=CountingKms(build_kms(config)))
    try:
        out = seeded(container, root, memories=memories, subjects=subjects)
        out.update(_assemble_service(container, subjects, queries))
        return out
    finally:
        container.close()


def _assemble_service(container: Any, subjects: int, queries: int) -> dict[str, Any]:
    from carnet.services.assemble import assemble, budgets

    rng = random.Random(11)
    deps = container.deps
    b = budgets(deps, overrides={})
    deps.embedder.reset_stats()
    samples: list[float] = []
    kms_before = container.kms.calls
    open_before = getattr(deps.index, "open_seconds", 0.0)
    for i in range(queries + WARMUP):
        who = subject(rng.randrange(subjects))
        q = question(rng, 1_000_000 + i)
        t0 = time.perf_counter()
        assemble(deps, tenant=TENANT, subject_id=who, query=q, budget=b)
        if i >= WARMUP:
            samples.append((time.perf_counter() - t0) * 1000)
    p = percentiles(samples)
    requests = queries + WARMUP
    return {"service_p50_ms": p["p50_ms"], "service_p95_ms": p["p95_ms"], "service_p99_ms": p["p99_ms"],
            "service_cache_hit_rate": round(deps.embedder.hit_rate(), 4),
            # crypto inside each request: time opening sealed fields, and KMS round trips (a subject's
            # key is unwrapped once per cache lifetime: 5 minutes, then it is fetched again)
            "service_open_ms_per_request": round(
                1000 * (getattr(deps.index, "open_seconds", 0.0) - open_before) / requests, 4),
            "service_kms_calls": container.kms.calls - kms_before, "service_requests": requests}


def _http_phase(root: Path, subjects: int, queries: int, pii: bool) -> dict[str, Any]:
    with serving(root, pii=pii) as (base, key):
        return _assemble_http(base, key, subjects, queries)


def _assemble_http(base: str, key: str, subjects: int, queries: int) -> dict[str, Any]:
    rng = random.Random(13)
    samples: list[float] = []
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=30) as http:
        for i in range(queries + WARMUP):
            body = {"subject_id": subject(rng.randrange(subjects)), "query": question(rng, 2_000_000 + i)}
            t0 = time.perf_counter()
            r = http.post("/api/v1/context/assemble", json=body)
            elapsed = (time.perf_counter() - t0) * 1000
            r.raise_for_status()
            if i >= WARMUP:
                samples.append(elapsed)
        hit_rate = _server_cache_hit_rate(http)
    p = percentiles(samples)
    return {"http_p50_ms": p["p50_ms"], "http_p95_ms": p["p95_ms"], "http_p99_ms": p["p99_ms"],
            "http_cache_hit_rate": hit_rate}


def _server_cache_hit_rate(http: httpx.Client) -> float:
    """Read the server's own query-cache counters from ``/metrics``."""
    values: dict[str, float] = {}
    for line in http.get("/metrics").text.splitlines():
        for name in ("carnet_query_cache_hits_total", "carnet_query_cache_misses_total"):
            if line.startswith(name + " "):
                values[name] = float(line.split()[1])
    hits = values.get("carnet_query_cache_hits_total", 0.0)
    total = hits + values.get("carnet_query_cache_misses_total", 0.0)
    return round(hits / total, 4) if total else 0.0


def _print(s: dict[str, Any]) -> None:
    print(f"machine: {s['machine']}")
    print(f"load: {s['memories']} memories over {s['subjects']} subjects; outcomes {s.get('ingest_outcomes')}")
    print(f"ingest: {s['ingest_per_s']} memories/s")
    print(f"assemble (service): p50 {s['service_p50_ms']} ms  p95 {s['service_p95_ms']} ms  "
          f"p99 {s['service_p99_ms']} ms  (query cache hit rate {s['service_cache_hit_rate']})")
    print(f"crypto (service): {s['service_open_ms_per_request']} ms opening fields per request; "
          f"{s['service_kms_calls']} KMS calls in {s['service_requests']} requests")
    print(f"assemble (HTTP):    p50 {s['http_p50_ms']} ms  p95 {s['http_p95_ms']} ms  p99 {s['http_p99_ms']} ms")
