"""``carnet bench ingest``: how fast `POST …/messages` answers, and how soon what it was given can be
searched, against ``carnet serve`` in its own process (it owns the shard and runs the workers).

Two phases, open loop (requests leave on a schedule, whether or not earlier ones finished):

- sustained: ``--rate`` intakes per second (3 messages each, with names, phone numbers and IBANs to
  pseudonymise) for ``--seconds``; each intake is followed with `GET /intakes/{id}?wait=true` and its
  intake-to-searchable time is when it is seen done (its memories are then in the index search reads);
- burst: ``--burst-rate`` per second for ``--burst-seconds``, faster than the workers extract, so the
  queue grows: the 202's latency must not.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from carnet.bench.report import emit_json, machine, percentiles, progress
from carnet.bench.synthetic import fact

TENANT = "bench"
_NAMES = ["Laurence Vasseur", "Jean-Baptiste Lefèvre", "Aïcha Benali", "Marc Dubreuil", "Sophie Carpentier",
          "Thomas Nguyen", "Élodie Marchand", "Karim Haddad"]
_ADVISOR = ["Très bien, je le note dans votre dossier.", "Je m'en occupe, vous recevrez une confirmation par courriel.",
            "Entendu, un conseiller vous rappellera sous 48 heures.", "Je transmets votre demande au service concerné."]


def run(*, rate: float, seconds: float, burst_rate: float, burst_seconds: float, subjects: int, threads: int,
        json_out: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="carnet-ingest-") as tmp:
        root = Path(tmp)
        key = _key(root)
        summary: dict[str, Any] = {"machine": machine(), "rate": rate, "seconds": seconds, "burst_rate": burst_rate,
                                   "burst_seconds": burst_seconds, "subjects": subjects, "worker_threads": threads}
        with _server(root, threads) as base, httpx.Client(base_url=base, headers=_auth(key), timeout=60) as http:
            rng = random.Random(29)
            progress(f"sustained: {rate}/s for {seconds} s")
            summary.update(_phase("sustained", base, key, rng, rate, seconds, subjects, follow=True))
            progress(f"burst: {burst_rate}/s for {burst_seconds} s")
            summary.update(_phase("burst", base, key, rng, burst_rate, burst_seconds, subjects, follow=False))
            summary.update(_drain(http))
            summary.update(_server_metrics(http))
    _print(summary)
    if json_out:
        emit_json(summary)


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _key(root: Path) -> str:
    from carnet.bootstrap.stores import build_control_plane
    from carnet.services.apikeys import create_key
    from carnet.settings.root import Settings

    plane = build_control_plane(Settings(data_dir=root / "data", key_dir=root / "keys"))
    try:
        return create_key(plane.catalog, plane.pepper, tenant=TENANT, roles=["agent"])[0]
    finally:
        plane.catalog.close()


class _server:
    """``carnet serve`` in a subprocess on a free port, stopped on exit."""

    def __init__(self, root: Path, threads: int) -> None:
        from carnet.entrypoints.http.server import free_port

        self.root, self.port = root, free_port()
        self.env = {**os.environ, "CARNET_KEY_DIR": str(root / "keys"), "CARNET_LOG_LEVEL": "WARNING",
                    "CARNET_WORKERS__THREADS": str(threads), "CARNET_MAINTENANCE__SCHEDULER": "false"}
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> str:
        from carnet.entrypoints.http.server import wait_ready

        cmd = [sys.executable, "-m", "carnet", "serve", "--data-dir", str(self.root / "data"),
               "--port", str(self.port)]
        self.log = (self.root / "serve.log").open("wb")
        self.proc = subprocess.Popen(cmd, env=self.env, stdout=subprocess.DEVNULL, stderr=self.log)
        base = f"http://127.0.0.1:{self.port}"
        proc = self.proc
        try:
            wait_ready(base, timeout=120, alive=lambda: proc.poll() is None)
        except (RuntimeError, TimeoutError):
            progress((self.root / "serve.log").read_text(errors="replace")[-2000:])
            raise
        return base

    def __exit__(self, *_: object) -> None:
        assert self.proc is not None
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def _messages(rng: random.Random) -> list[dict[str, str]]:
    name = rng.choice(_NAMES)
    phone = "06 " + " ".join(f"{rng.randint(0, 99):02d}" for _ in range(4))
    return [
        {"role": "user", "content": f"Bonjour, c'est {name}, vous pouvez me joindre au {phone}."},
        {"role": "user", "content": fact(rng)},
        {"role": "advisor", "content": rng.choice(_ADVISOR)},
    ]


def _phase(name: str, base: str, key: str, rng: random.Random, rate: float, seconds: float, subjects: int, *,
           follow: bool) -> dict[str, Any]:
    total = int(rate * seconds)
    bodies = [(f"mbr-{rng.randrange(subjects):05d}", {"session_id": f"{name}-{n}", "messages": _messages(rng)})
              for n in range(total)]
    posted: list[float] = []
    searchable: list[float] = []
    outcomes: dict[str, int] = {}
    lock = threading.Lock()
    local = threading.local()

    def client() -> httpx.Client:
        if not hasattr(local, "http"):
            local.http = httpx.Client(base_url=base, headers=_auth(key), timeout=60)
        c: httpx.Client = local.http
        return c

    def one(subject: str, body: dict[str, Any]) -> None:
        http = client()
        t0 = time.perf_counter()
        r = http.post(f"/api/v1/subjects/{subject}/messages", json=body)
        t1 = time.perf_counter()
        r.raise_for_status()
        status = "pending"
        if follow:
            while status in ("pending", "processing") and time.perf_counter() - t0 < 120:
                status = http.get(f"/api/v1/intakes/{r.json()['intake_id']}", params={"wait": "true"}).json()["status"]
        with lock:
            posted.append((t1 - t0) * 1000)
            if follow:
                searchable.append((time.perf_counter() - t0) * 1000)
                outcomes[status] = outcomes.get(status, 0) + 1

    _open_loop(bodies, rate, one, workers=64 if follow else 16)
    out: dict[str, Any] = {f"{name}_intakes": total}
    p = percentiles(posted)
    out.update({f"{name}_post_p50_ms": p["p50_ms"], f"{name}_post_p95_ms": p["p95_ms"],
                f"{name}_post_p99_ms": p["p99_ms"]})
    if follow:
        s = percentiles(searchable)
        out.update({f"{name}_searchable_p50_ms": s["p50_ms"], f"{name}_searchable_p95_ms": s["p95_ms"],
                    f"{name}_searchable_p99_ms": s["p99_ms"], f"{name}_outcomes": outcomes})
    return out


def _open_loop(bodies: list[tuple[str, dict[str, Any]]], rate: float,
               one: Callable[[str, dict[str, Any]], None], *, workers: int) -> None:
    """Each request leaves at its scheduled time, whatever the previous ones are doing."""
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = []
        for n, (subject, body) in enumerate(bodies):
            delay = start + n / rate - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            futures.append(pool.submit(one, subject, body))
        for f in futures:
            f.result()


def _drain(http: httpx.Client, timeout: float = 600) -> dict[str, Any]:
    """Wait for the burst's intakes to be processed; report how long the queue took to empty."""
    t0 = time.perf_counter()
    deepest = 0.0
    while time.perf_counter() - t0 < timeout:
        metrics = _parse(http.get("/metrics").text)
        waiting = metrics.get('carnet_intakes{state="pending"}', 0.0) + metrics.get(
            'carnet_intakes{state="processing"}', 0.0)
        deepest = max(deepest, waiting)
        if waiting == 0:
            break
        time.sleep(0.5)
    return {"burst_queue_depth_after": int(deepest), "burst_drain_s": round(time.perf_counter() - t0, 1)}


def _server_metrics(http: httpx.Client) -> dict[str, Any]:
    m = _parse(http.get("/metrics").text)
    count = sum(v for k, v in m.items() if k.startswith("carnet_extraction_duration_seconds_count"))
    total = sum(v for k, v in m.items() if k.startswith("carnet_extraction_duration_seconds_sum"))
    return {"extraction_ms_mean": round(total / count * 1000, 2) if count else None,
            "intakes_done": int(m.get('carnet_intakes_finished_total{outcome="done"}', 0)),
            "intakes_dead": int(m.get('carnet_intakes{state="dead"}', 0))}


def _parse(text: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            try:
                out[name] = float(value)
            except ValueError:
                continue
    return out


def _print(s: dict[str, Any]) -> None:
    print(f"machine: {s['machine']}; worker threads: {s['worker_threads']}")
    print(f"sustained {s['rate']}/s × {s['seconds']} s ({s['sustained_intakes']} intakes, 3 messages each): "
          f"202 p50 {s['sustained_post_p50_ms']} / p95 {s['sustained_post_p95_ms']} / "
          f"p99 {s['sustained_post_p99_ms']} ms;"
          f" intake-to-searchable p50 {s['sustained_searchable_p50_ms']} / p95 {s['sustained_searchable_p95_ms']} /"
          f" p99 {s['sustained_searchable_p99_ms']} ms; outcomes {s['sustained_outcomes']}")
    print(f"burst {s['burst_rate']}/s × {s['burst_seconds']} s: 202 p50 {s['burst_post_p50_ms']} / "
          f"p95 {s['burst_post_p95_ms']} / p99 {s['burst_post_p99_ms']} ms; queue up to "
          f"{s['burst_queue_depth_after']}, drained in {s['burst_drain_s']} s")
    print(f"extraction: {s['extraction_ms_mean']} ms mean per intake; done {s['intakes_done']}, "
          f"dead {s['intakes_dead']}")
