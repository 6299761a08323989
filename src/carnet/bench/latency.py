"""``carnet bench latency``: ingest throughput, then assemble latency (service layer, then HTTP).

The store may be kept (``--store DIR``) and is reused when it already holds the asked-for load.
``--text-pool N`` builds the store with the bulk builder (``bench.text_pool``: N distinct texts, each
embedded once, written as ``remember`` creates them, without reconcile); ``--curve`` measures several
sizes in one run, each in its own store under ``--store`` (``m<size>``), all built first and then
measured back to back, each by this command in a new process that reuses its store. HTTP is
measured against ``carnet serve`` in a separate process (it owns the shard), over loopback, with a
keep-alive client, one request at a time. Every question is new: the query-embedding cache hit rate
is reported and is 0 for the quoted figures.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from carnet.bench.report import emit_json, machine, percentiles
from carnet.bench.served import (
    TENANT,
    disk_bytes,
    reusable,
    rss_bytes,
    seeded,
    served_process,
    settings,
    subject,
)
from carnet.bench.synthetic import question
from carnet.bench.text_pool import check_pool

WARMUP = 20


def run(*, memories: int, subjects: int, queries: int, store: Path | None, json_out: bool, pii: bool = True,
        text_pool: int | None = None, curve: Sequence[int] | None = None) -> None:
    """One load (``memories``), or with ``curve`` one store per size, all built first (or reused), then
    measured one after the other."""
    for size in curve or [memories]:  # refuse a bad pool or a store built another way before any model loads
        if text_pool is not None:
            check_pool(size, subjects, text_pool)
        if store is not None:
            reusable(store / f"m{size}" if curve else store, memories=size, subjects=subjects, text_pool=text_pool)
    if curve:
        _run_curve(sizes=curve, subjects=subjects, queries=queries, store=store, json_out=json_out, pii=pii,
                   text_pool=text_pool)
        return
    started = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="carnet-latency-") as tmp:
        root = store or Path(tmp)
        summary: dict[str, Any] = {"memories": memories, "subjects": subjects, "machine": machine(), "pii": pii}
        summary.update(_measured(root, memories, subjects, queries, pii, text_pool))
    summary.update(_load_average(started))
    _print(summary)
    if json_out:
        emit_json(summary)


def _run_curve(*, sizes: Sequence[int], subjects: int, queries: int, store: Path | None, json_out: bool,
               pii: bool, text_pool: int | None) -> None:
    with tempfile.TemporaryDirectory(prefix="carnet-latency-") as tmp:
        root = store or Path(tmp)
        for size in sizes:
            _built(_size_root(root, size), size, subjects, pii, text_pool)
        started = os.getloadavg()
        rows = []
        for size in sizes:
            rows.append(_measured_apart(_size_root(root, size), size, subjects, queries, pii, text_pool))
            _print_row(rows[-1])
    summary: dict[str, Any] = {"subjects": subjects, "queries": queries, "machine": machine(), "pii": pii,
                               "text_pool": text_pool, "curve": rows, **_load_average(started)}
    for path in ("service", "http"):
        summary[f"{path}_p95_ratio"] = round(rows[-1][f"{path}_p95_ms"] / rows[0][f"{path}_p95_ms"], 3)
    print(f"machine: {summary['machine']}; load average {summary['load_average_start']} at the first "
          f"measurement, {summary['load_average_end']} at the end")
    print(f"p95 at {sizes[-1]} / p95 at {sizes[0]} memories: service {summary['service_p95_ratio']}, "
          f"HTTP {summary['http_p95_ratio']}")
    if json_out:
        emit_json(summary)


def _measured_apart(root: Path, memories: int, subjects: int, queries: int, pii: bool,
                    text_pool: int | None) -> dict[str, Any]:
    """One size measured by this command in a new process, which reuses the store: the service layer's
    figures are not those of a process that has just built a million records (in this one, 5 % of
    the assembles took ~680 ms whatever the size, against ~65 ms over HTTP in a new server)."""
    cmd = [sys.executable, "-m", "carnet", "bench", "latency", "--memories", str(memories),
           "--subjects", str(subjects), "--queries", str(queries), "--store", str(root), "--json",
           "--pii" if pii else "--no-pii", *(["--text-pool", str(text_pool)] if text_pool is not None else [])]
    done = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True)
    row: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return row


def _size_root(root: Path, size: int) -> Path:
    path = root / f"m{size}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _load_average(started: tuple[float, float, float]) -> dict[str, list[float]]:
    """1, 5 and 15-minute load averages when the measurements started and ended (the machine is shared)."""
    return {"load_average_start": [round(x, 2) for x in started],
            "load_average_end": [round(x, 2) for x in os.getloadavg()]}


def _measured(root: Path, memories: int, subjects: int, queries: int, pii: bool,
              text_pool: int | None) -> dict[str, Any]:
    out = _service_phase(root, memories, subjects, queries, pii, text_pool)
    out.update(_http_phase(root, subjects, queries, pii))
    out["disk_bytes"] = disk_bytes(root / "data")
    return out


def _built(root: Path, memories: int, subjects: int, pii: bool, text_pool: int | None) -> None:
    from carnet.bench.crypto import CountingKms
    from carnet.bootstrap.keys import build_kms
    from carnet.bootstrap.wiring import build

    if reusable(root, memories=memories, subjects=subjects, text_pool=text_pool):
        return
    config = settings(root, pii)
    container = build(config, kms=CountingKms(build_kms(config)))
    try:
        seeded(container, root, memories=memories, subjects=subjects, text_pool=text_pool)
    finally:
        container.close()


def _service_phase(root: Path, memories: int, subjects: int, queries: int, pii: bool,
                   text_pool: int | None) -> dict[str, Any]:
    from carnet.bench.crypto import CountingKms
    from carnet.bootstrap.keys import build_kms
    from carnet.bootstrap.wiring import build

    config = settings(root, pii)
    container = build(config, kms=CountingKms(build_kms(config)))
    try:
        out = seeded(container, root, memories=memories, subjects=subjects, text_pool=text_pool)
        out["points"] = _points(container, subjects)
        out.update(_assemble_service(container, subjects, queries))
        return out
    finally:
        container.close()


def _points(container: Any, subjects: int) -> int:
    """Active records in the store, counted subject by subject through the index."""
    from carnet.ports import RecordFilter
    from carnet.services.scope import scope_for

    deps = container.deps
    return sum(deps.index.count(scope_for(deps, TENANT, subject(s)), where=RecordFilter()) for s in range(subjects))


def _assemble_service(container: Any, subjects: int, queries: int) -> dict[str, Any]:
    from carnet.bench.records import TimedOpening
    from carnet.services.memories.assemble import assemble, budgets

    rng = random.Random(11)
    timed = TimedOpening(container.deps.index)
    deps = dataclasses.replace(container.deps, index=timed)
    b = budgets(deps, overrides={})
    cache = deps.embedder  # its counters are the ones /metrics exports: read as deltas, never reset
    hits, misses = cache.hits, cache.misses
    samples: list[float] = []
    kms_before = container.kms.calls
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
            "service_cache_hit_rate": _share(cache.hits - hits, cache.misses - misses),
            # crypto inside each request: time opening sealed fields, and KMS round trips (a subject's
            # key is unwrapped once per cache lifetime: 5 minutes, then it is fetched again)
            "service_open_ms_per_request": round(1000 * timed.open_seconds / requests, 4),
            "service_kms_calls": container.kms.calls - kms_before, "service_requests": requests}


def _share(hits: int, misses: int) -> float:
    return round(hits / (hits + misses), 4) if hits + misses else 0.0


def _http_phase(root: Path, subjects: int, queries: int, pii: bool) -> dict[str, Any]:
    with served_process(root, pii=pii) as (base, key, pid):
        out = _assemble_http(base, key, subjects, queries)
        out.update(rss_bytes(pid))
        return out


def _assemble_http(base: str, key: str, subjects: int, queries: int) -> dict[str, Any]:
    rng = random.Random(13)
    samples: list[float] = []
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=30) as http:

        def one(i: int) -> float:
            body = {"subject_id": subject(rng.randrange(subjects)), "query": question(rng, 2_000_000 + i)}
            t0 = time.perf_counter()
            r = http.post("/api/v1/context/assemble", json=body)
            elapsed = (time.perf_counter() - t0) * 1000
            r.raise_for_status()
            return elapsed

        for i in range(WARMUP):
            one(i)
        before = _metrics(http)
        samples = [one(i) for i in range(WARMUP, WARMUP + queries)]
        after = _metrics(http)
        floor = percentiles([_round_trip(http) for _ in range(FLOOR_PROBES)])["p50_ms"]
    p = percentiles(samples)
    served = [after.get(name, 0.0) - before.get(name, 0.0) for name in (_SERVED_SUM, _SERVED_COUNT)]
    hits, misses = after.get(_CACHE_HITS, 0.0), after.get(_CACHE_MISSES, 0.0)
    return {"http_p50_ms": p["p50_ms"], "http_p95_ms": p["p95_ms"], "http_p99_ms": p["p99_ms"],
            "http_cache_hit_rate": round(hits / (hits + misses), 4) if hits + misses else 0.0,
            # where the HTTP figures go: the server's own time per assemble (its request histogram, from
            # the first byte read to the last sent), and a /healthz round trip (client and loopback)
            "http_server_mean_ms": round(1000 * served[0] / served[1], 3) if served[1] else None,
            "http_floor_p50_ms": floor}


FLOOR_PROBES = 200  # /healthz round trips after the assembles
_ASSEMBLED = '{method="POST",route="/api/v1/context/assemble",status="200"}'
_SERVED_SUM = "carnet_http_request_duration_seconds_sum" + _ASSEMBLED
_SERVED_COUNT = "carnet_http_request_duration_seconds_count" + _ASSEMBLED
_CACHE_HITS, _CACHE_MISSES = "carnet_query_cache_hits_total", "carnet_query_cache_misses_total"


def _round_trip(http: httpx.Client) -> float:
    t0 = time.perf_counter()
    http.get("/healthz").raise_for_status()
    return (time.perf_counter() - t0) * 1000


def _metrics(http: httpx.Client) -> dict[str, float]:
    """The server's ``/metrics`` samples, by name with their labels as written (the query cache's
    counters and the assemble route's request histogram are read from here)."""
    out: dict[str, float] = {}
    for line in http.get("/metrics").text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out


def _print(s: dict[str, Any]) -> None:
    print(f"machine: {s['machine']}")
    print(f"load: {s['memories']} memories over {s['subjects']} subjects; outcomes {s.get('ingest_outcomes')}")
    print(f"ingest: {s['ingest_per_s']} memories/s ({s.get('ingest_builder', 'remember')}"
          f"{', pool of ' + str(s['text_pool']) + ' texts' if s.get('text_pool') else ''})")
    print(f"store: {s['points']} active records, {s['disk_bytes'] / 2**20:.0f} MiB on disk; "
          f"serve RSS {s.get('serve_rss_bytes', 0) / 2**20:.0f} MiB"
          f" + {s.get('serve_children_rss_bytes', 0) / 2**20:.0f} MiB in its child processes")
    print(f"assemble (service): p50 {s['service_p50_ms']} ms  p95 {s['service_p95_ms']} ms  "
          f"p99 {s['service_p99_ms']} ms  (query cache hit rate {s['service_cache_hit_rate']})")
    print(f"crypto (service): {s['service_open_ms_per_request']} ms opening fields per request; "
          f"{s['service_kms_calls']} KMS calls in {s['service_requests']} requests")
    print(f"assemble (HTTP):    p50 {s['http_p50_ms']} ms  p95 {s['http_p95_ms']} ms  p99 {s['http_p99_ms']} ms"
          f"  (in the server: mean {s.get('http_server_mean_ms')} ms; a /healthz round trip: p50 "
          f"{s.get('http_floor_p50_ms')} ms)")


def _print_row(r: dict[str, Any]) -> None:
    rss, children = r.get("serve_rss_bytes", 0) / 2**20, r.get("serve_children_rss_bytes", 0) / 2**20
    print(f"{r['memories']} memories ({r['points']} active records, {r['disk_bytes'] / 2**20:.0f} MiB on disk, "
          f"serve RSS {rss:.0f} + {children:.0f} MiB): service p50 {r['service_p50_ms']} / p95 {r['service_p95_ms']} / "
          f"p99 {r['service_p99_ms']} ms; HTTP p50 {r['http_p50_ms']} / p95 {r['http_p95_ms']} / "
          f"p99 {r['http_p99_ms']} ms")
