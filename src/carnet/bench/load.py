"""``carnet bench load``: open-loop load on ``carnet serve``, assemble mixed with writes, rate after rate.

The server runs in its own process (``carnet serve`` on the store, spawned here, or the one at
``--url``); the load generator is this process, one asyncio loop and one httpx client with enough
connections that it never queues a request itself. Open loop: request ``i`` of a rate is sent at
``start + i / rate`` whatever the answers, so a slow server does not slow the sender down, and every
latency is measured from that scheduled time (queueing counts, on either side). ``send_lag`` says how
late the sender itself was. Writes (``--write-share``) are half ``remember``, half ``messages``; every
question is new (a serial number in it), so the query cache never answers.

Both processes share the machine's cores: on a small machine the sender's own CPU shows in the figures.
"""

from __future__ import annotations

import asyncio
import os
import random
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from carnet.bench.report import emit_json, machine, percentiles, progress
from carnet.bench.served import seeded, serving, settings, subject
from carnet.bench.synthetic import fact, question

WARMUP = 10
KEY_BUDGET = "1000000/second"  # the bench key's own budget: the load measures admission, not the key's limit
_KINDS = ("assemble", "remember", "messages")


@dataclass(frozen=True, slots=True)
class Shot:
    kind: str
    path: str
    body: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Outcome:
    kind: str
    latency_ms: float  # from the scheduled send time to the answer (or the timeout)
    lag_ms: float  # how late the sender was
    status: int | None  # None: no answer (timeout or transport error)
    code: str = ""  # the error body's code, or the transport error's kind


def run(*, rates: Sequence[float], seconds: float, write_share: float, subjects: int, memories: int,
        store: Path | None, url: str | None, timeout: float, json_out: bool, pii: bool = True) -> None:
    summary: dict[str, Any] = {"machine": machine(), "load_average": _load_average(), "subjects": subjects,
                               "memories": memories, "write_share": write_share, "seconds": seconds,
                               "server": url or "carnet serve (spawned)"}
    if url is not None:
        key = os.environ.get("CARNET_API_KEY", "")
        if not key:
            raise ValueError("--url needs an agent key in CARNET_API_KEY")
        summary["rates"] = asyncio.run(_measure(url, key, rates, seconds, write_share, subjects, timeout))
    else:
        with tempfile.TemporaryDirectory(prefix="carnet-load-") as tmp:
            root = store or Path(tmp)
            summary.update(_seed(root, memories, subjects, pii))
            with serving(root, pii=pii, rate_limit=KEY_BUDGET) as (base, key):
                summary["rates"] = asyncio.run(_measure(base, key, rates, seconds, write_share, subjects, timeout))
    summary["load_average_after"] = _load_average()
    _print(summary)
    if json_out:
        emit_json(summary)


def _seed(root: Path, memories: int, subjects: int, pii: bool) -> dict[str, Any]:
    from carnet.bootstrap.wiring import build

    container = build(settings(root, pii))
    try:
        return seeded(container, root, memories=memories, subjects=subjects)
    finally:
        container.close()


async def _measure(base: str, key: str, rates: Sequence[float], seconds: float, write_share: float,
                   subjects: int, timeout: float) -> list[dict[str, Any]]:
    rng = random.Random(17)
    serial = iter(range(3_000_000, 1 << 62))
    limits = httpx.Limits(max_connections=2000, max_keepalive_connections=2000)
    async with httpx.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=timeout,
                                 limits=limits) as http:
        for _ in range(WARMUP):  # the model and the first connections warm up, unmeasured
            shot = _assemble(rng, subjects, next(serial))
            try:
                r = await http.post(shot.path, json=shot.body)
            except httpx.TransportError as exc:
                raise ValueError(f"no answer from {base} ({type(exc).__name__})") from exc
            if r.status_code in (401, 403):
                raise ValueError(f"{base} refused the key ({r.status_code} {_code(r)})")
        results = []
        for rate in rates:
            progress(f"rate {rate:g}/s for {seconds:g} s…")
            shots = [_shot(rng, subjects, write_share, next(serial)) for _ in range(max(1, round(rate * seconds)))]
            outcomes, elapsed = await _open_loop(http, shots, rate)
            results.append(_summary(rate, seconds, outcomes, elapsed))
            progress(_line(results[-1]))
            await asyncio.sleep(1.0)  # let what is still queued on the server drain
    return results


def _shot(rng: random.Random, subjects: int, write_share: float, serial: int) -> Shot:
    if rng.random() >= write_share:
        return _assemble(rng, subjects, serial)
    who = subject(rng.randrange(subjects))
    if rng.random() < 0.5:
        return Shot("remember", f"/api/v1/subjects/{who}/memories", {"text": fact(rng)})
    said = fact(rng).replace("Le membre ", "Je ", 1)
    return Shot("messages", f"/api/v1/subjects/{who}/messages", {"messages": [{"role": "user", "content": said}]})


def _assemble(rng: random.Random, subjects: int, serial: int) -> Shot:
    return Shot("assemble", "/api/v1/context/assemble",
                {"subject_id": subject(rng.randrange(subjects)), "query": question(rng, serial)})


async def _open_loop(http: httpx.AsyncClient, shots: Sequence[Shot], rate: float) -> tuple[list[Outcome], float]:
    """Send ``shots`` at ``rate`` on a fixed schedule; every outcome, and the time from the first
    scheduled send to the last answer."""
    loop = asyncio.get_running_loop()
    start = loop.time() + 0.05
    tasks = []
    for i, shot in enumerate(shots):
        at = start + i / rate
        delay = at - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(_send(http, shot, at)))
    outcomes = await asyncio.gather(*tasks)
    return list(outcomes), loop.time() - start


async def _send(http: httpx.AsyncClient, shot: Shot, scheduled: float) -> Outcome:
    loop = asyncio.get_running_loop()
    lag = (loop.time() - scheduled) * 1000
    try:
        r = await http.post(shot.path, json=shot.body)
    except httpx.TimeoutException:
        return Outcome(shot.kind, (loop.time() - scheduled) * 1000, lag, None, "timeout")
    except httpx.TransportError as exc:
        return Outcome(shot.kind, (loop.time() - scheduled) * 1000, lag, None, type(exc).__name__)
    latency = (loop.time() - scheduled) * 1000
    return Outcome(shot.kind, latency, lag, r.status_code, "" if r.is_success else _code(r))


def _code(r: httpx.Response) -> str:
    try:
        return str(r.json()["error"]["code"])
    except (ValueError, KeyError, TypeError):
        return "no_error_body"


def _summary(rate: float, seconds: float, outcomes: Sequence[Outcome], elapsed: float) -> dict[str, Any]:
    ok = [o for o in outcomes if o.status is not None and 200 <= o.status < 300]
    refused: dict[str, int] = {}
    for o in outcomes:
        if o.status is not None and not 200 <= o.status < 300:
            refused[f"{o.status} {o.code}"] = refused.get(f"{o.status} {o.code}", 0) + 1
    no_answer = [o for o in outcomes if o.status is None]
    by_kind = {}
    for kind in _KINDS:
        mine = [o.latency_ms for o in ok if o.kind == kind]
        if mine or any(o.kind == kind for o in outcomes):
            by_kind[kind] = {"sent": sum(o.kind == kind for o in outcomes), "ok": len(mine), **percentiles(mine)}
    answered = [o.latency_ms for o in outcomes if o.status is not None]
    return {
        "offered_per_s": rate, "sent": len(outcomes), "ok": len(ok),
        "achieved_per_s": round(len(ok) / max(seconds, elapsed), 2),
        **percentiles([o.latency_ms for o in ok]),
        "by_kind": by_kind, "refused": refused,
        "timeouts": sum(o.code == "timeout" for o in no_answer),
        "transport_errors": sum(o.code != "timeout" for o in no_answer),
        "refused_p99_ms": percentiles([o.latency_ms for o in outcomes
                                       if o.status is not None and not 200 <= o.status < 300])["p99_ms"],
        "answered_max_ms": round(max(answered), 3) if answered else 0.0,
        "send_lag_p99_ms": percentiles([o.lag_ms for o in outcomes])["p99_ms"],
    }


def _load_average() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def _line(r: dict[str, Any]) -> str:
    refused = ", ".join(f"{k}: {v}" for k, v in sorted(r["refused"].items())) or "none"
    return (f"offered {r['offered_per_s']:g}/s  achieved {r['achieved_per_s']:g}/s  p50 {r['p50_ms']} ms  "
            f"p95 {r['p95_ms']} ms  p99 {r['p99_ms']} ms  refused {refused} (p99 {r['refused_p99_ms']} ms)  "
            f"timeouts {r['timeouts']}  "
            f"sender lag p99 {r['send_lag_p99_ms']} ms")


def _print(s: dict[str, Any]) -> None:
    print(f"machine: {s['machine']}; load average {s['load_average']} (after: {s['load_average_after']})")
    print(f"server: {s['server']}; {s['memories']} memories over {s['subjects']} subjects; "
          f"writes {s['write_share']:.0%}; {s['seconds']:g} s per rate")
    for r in s["rates"]:
        print(_line(r))
        for kind, k in r["by_kind"].items():
            print(f"    {kind:<9} sent {k['sent']:>5}  ok {k['ok']:>5}  p50 {k['p50_ms']} ms  p95 {k['p95_ms']} ms  "
                  f"p99 {k['p99_ms']} ms")
