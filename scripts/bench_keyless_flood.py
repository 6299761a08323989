"""A legitimate client's latency with and without keyless clients posting large bodies.

Starts a real ``carnet serve`` on loopback (a fresh data directory, embedded defaults), creates an
agent key, seeds one memory, then times ``GET /api/v1/subjects/{id}/memories`` with that key:
first alone, then while ``--flooders`` threads post ``--body-mb`` MB JSON bodies without a key as
fast as they can. Bounded: each phase is ``--requests`` requests of the legitimate client. Prints
p50/p95 (ms) of both phases, the flood's answers by status, and the machine.

    python scripts/bench_keyless_flood.py --requests 300 --flooders 6 --body-mb 2
    CARNET_API__UNAUTHENTICATED_RATE_LIMIT= python scripts/bench_keyless_flood.py   # no address budget
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, Protocol

import httpx

from carnet.entrypoints.http.server import free_port, wait_ready

SUBJECT = "BENCH-0001"


class EventLike(Protocol):
    def is_set(self) -> bool: ...


class QueueLike(Protocol):
    def put(self, obj: Any) -> None: ...


def _cpu() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _percentiles(ms: list[float]) -> dict[str, float]:
    q = statistics.quantiles(ms, n=100)
    return {"p50": round(statistics.median(ms), 2), "p95": round(q[94], 2)}


def _timed(client: httpx.Client, n: int) -> list[float]:
    out = []
    for _ in range(n):
        started = time.perf_counter()
        r = client.get(f"/api/v1/subjects/{SUBJECT}/memories")
        out.append((time.perf_counter() - started) * 1000)
        assert r.status_code == 200, r.status_code
    return out


def _flood(base: str, body_mb: float, stop: EventLike, out: QueueLike) -> None:
    """One keyless client (its own process, so its work never holds the timing client's GIL)."""
    body = json.dumps({"text": "a" * int(body_mb * 1024 * 1024)}).encode()
    statuses: Counter[int] = Counter()
    with httpx.Client(base_url=base, timeout=30) as client:
        while not stop.is_set():
            try:
                statuses[client.post(f"/api/v1/subjects/{SUBJECT}/memories", content=body,
                                     headers={"content-type": "application/json"}).status_code] += 1
            except httpx.TransportError:
                statuses[0] += 1
    out.put(dict(statuses))


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--flooders", type=int, default=6)
    parser.add_argument("--body-mb", type=float, default=2.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = {**os.environ, "CARNET_KEY_DIR": str(root / "keys"), "CARNET_MAINTENANCE__SCHEDULER": "false",
               "CARNET_DATA_DIR": str(root / "data")}
        made = subprocess.run([sys.executable, "-m", "carnet", "apikey", "create", "--tenant", "bench",
                               "--role", "agent"], env=env, check=True, capture_output=True, text=True)
        key = made.stdout.strip().splitlines()[-1]
        port = free_port()
        with (root / "serve.log").open("wb") as log:
            proc = subprocess.Popen([sys.executable, "-m", "carnet", "serve", "--port", str(port)], env=env,
                                    stdout=subprocess.DEVNULL, stderr=log)
            base = f"http://127.0.0.1:{port}"
            try:
                wait_ready(base, timeout=180, alive=lambda: proc.poll() is None)
                result = _run(base, key, args, proc.pid)
            finally:
                proc.terminate()
                proc.wait(timeout=60)
    result.update(cpu=_cpu(), cores=os.cpu_count(), load_average=[round(x, 1) for x in os.getloadavg()],
                  unauthenticated_rate_limit=os.environ.get("CARNET_API__UNAUTHENTICATED_RATE_LIMIT", "default"))
    print(json.dumps(result, indent=2))


def _run(base: str, key: str, args: argparse.Namespace, pid: int) -> dict[str, object]:
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=30) as client:
        assert client.post(f"/api/v1/subjects/{SUBJECT}/memories",
                           json={"text": "Le membre préfère être rappelé le matin."}).status_code == 201
        _timed(client, 20)  # warm up
        cpu0, t0 = _cpu_seconds(pid), time.monotonic()
        alone = _timed(client, args.requests)
        cpu_alone = (_cpu_seconds(pid) - cpu0) / (time.monotonic() - t0)
        ctx = multiprocessing.get_context("spawn")
        stop, out = ctx.Event(), ctx.Queue()
        procs = [ctx.Process(target=_flood, args=(base, args.body_mb, stop, out)) for _ in range(args.flooders)]
        for p in procs:
            p.start()
        time.sleep(2.0)  # let the flood reach full speed before timing
        cpu0, t0 = _cpu_seconds(pid), time.monotonic()
        flooded = _timed(client, args.requests)
        seconds = time.monotonic() - t0
        cpu_flooded = (_cpu_seconds(pid) - cpu0) / seconds
        stop.set()
        statuses: Counter[int] = Counter()
        for _ in procs:
            statuses.update(out.get(timeout=120))
        for p in procs:
            p.join(timeout=60)
    return {"alone_ms": _percentiles(alone), "flooded_ms": _percentiles(flooded),
            "server_cpu_cores": {"alone": round(cpu_alone, 2), "flooded": round(cpu_flooded, 2)},
            "flood_answers": dict(sorted(statuses.items())), "flooders": args.flooders, "body_mb": args.body_mb}


if __name__ == "__main__":
    main()
