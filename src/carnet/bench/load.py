"""``carnet bench load``: open-loop load on ``carnet serve``, assemble mixed with writes, rate after rate.

The server runs in its own process (``carnet serve`` on the store, spawned here, or the one at
``--url``); the load generator is this process, one asyncio loop and one httpx client with enough
connections that it never queues a request itself. Open loop: request ``i`` of a rate is sent at
``start + i / rate`` whatever the answers, so a slow server does not slow the sender down, and every
latency is measured from that scheduled time (queueing counts, on either side). ``send_lag`` says how
late the sender itself was. Writes (``--write-share``) are half ``remember``, half ``messages``; every
question is new (a serial number in it), so the query cache never answers.

``--turns K``: who the questions are about (``Calls``). With 1 (the default) each is about a member drawn
at random, the worst case for the server's caches. With K > 1 they come from calls: ``CALLS_AT_ONCE``
calls are on the line at once, each question goes to one of them drawn at random, and a call that has
asked K questions about its member hangs up and a new call about another member takes its place, as an
assistant asks before each LLM turn of a call (the other calls' questions come in between). Writes
are about a member drawn at random either way.

``--recovery S``: after each rate, the sender goes straight on at the first rate for S seconds, and
the answers are cut into one-second windows by scheduled time. A window is *at the first rate's figures*
when none of its requests was refused or unanswered and its accepted p95 is at most
``RECOVERED_P95`` times the p95 the first rate had; ``recovered_after_s`` is the start of the first window
from which every later one is (null: never within S). So "answers at its normal figures within 5 s of the
load stopping" is read off ``recovery.recovered_after_s <= 5``.

Both processes share the machine's cores: on a small machine the sender's own CPU shows in the figures.
"""

from __future__ import annotations

import asyncio
import math
import os
import random
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from carnet.bench import cpu
from carnet.bench.report import emit_json, machine, percentiles, progress
from carnet.bench.served import seeded, served_process, settings, subject
from carnet.bench.synthetic import fact, question

WARMUP = 10
RECOVERED_P95 = 1.5  # a recovery window's p95 may be this many times the first rate's (1 s windows are noisy)
KEY_BUDGET = "1000000/second"  # the bench key's own budget: the load measures admission, not the key's limit
CALLS_AT_ONCE = 64  # with --turns: calls on the line at once, among which each question is drawn
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
    offset_s: float  # the scheduled send time, from the start of its run
    lag_ms: float  # how late the sender was
    status: int | None  # None: no answer (timeout or transport error)
    code: str = ""  # the error body's code, or the transport error's kind


def run(*, rates: Sequence[float], seconds: float, write_share: float, subjects: int, memories: int,
        store: Path | None, url: str | None, timeout: float, json_out: bool, pii: bool = True,
        text_pool: int | None = None, recovery: float = 0.0, warmup: int = WARMUP, turns: int = 1) -> None:
    if turns < 1:
        raise ValueError("--turns must be at least 1")
    summary: dict[str, Any] = {"machine": machine(), "load_average": _load_average(), "subjects": subjects,
                               "memories": memories, "write_share": write_share, "seconds": seconds,
                               "server": url or "carnet serve (spawned)", "recovery_s": recovery, "turns": turns}
    plan = _Plan(rates, seconds, write_share, subjects, timeout, recovery, max(1, warmup), turns)
    summary["warmup"] = plan.warmup
    if url is not None:
        key = os.environ.get("CARNET_API_KEY", "")
        if not key:
            raise ValueError("--url needs an agent key in CARNET_API_KEY")
        summary["rates"] = asyncio.run(_measure(url, key, plan))
    else:
        with tempfile.TemporaryDirectory(prefix="carnet-load-") as tmp:
            root = store or Path(tmp)
            summary.update(_seed(root, memories, subjects, pii, text_pool))
            with served_process(root, pii=pii, rate_limit=KEY_BUDGET) as (base, key, pid):
                summary["rates"] = asyncio.run(_measure(base, key, plan, server_pid=pid))
    summary["load_average_after"] = _load_average()
    _print(summary)
    if json_out:
        emit_json(summary)


def _seed(root: Path, memories: int, subjects: int, pii: bool, text_pool: int | None) -> dict[str, Any]:
    from carnet.bootstrap.wiring import build

    container = build(settings(root, pii))
    try:
        return seeded(container, root, memories=memories, subjects=subjects, text_pool=text_pool)
    finally:
        container.close()


@dataclass(frozen=True, slots=True)
class _Plan:
    rates: Sequence[float]
    seconds: float
    write_share: float
    subjects: int
    timeout: float
    recovery: float
    warmup: int = WARMUP
    turns: int = 1


class Calls:
    """Who each question is about (``--turns``, see the module's doc): a member drawn at random when
    ``turns`` is 1; else the member of one of ``at_once`` calls on the line, drawn at random, each call
    asking ``turns`` questions before another member's call takes its place."""

    def __init__(self, rng: random.Random, subjects: int, turns: int, at_once: int = CALLS_AT_ONCE) -> None:
        if subjects < 1 or turns < 1 or at_once < 1:
            raise ValueError("subjects, turns and calls at once must be at least 1")
        self._rng, self._subjects, self._turns = rng, subjects, turns
        self._lines = [self._call() for _ in range(at_once)] if turns > 1 else []

    def _call(self) -> list[int]:
        """A new call: its member, and the questions it has left to ask."""
        return [self._rng.randrange(self._subjects), self._turns]

    def member(self) -> int:
        """The member the next question is about."""
        if not self._lines:
            return self._rng.randrange(self._subjects)
        i = self._rng.randrange(len(self._lines))
        line = self._lines[i]
        line[1] -= 1
        if line[1] == 0:
            self._lines[i] = self._call()
        return line[0]


async def _measure(base: str, key: str, plan: _Plan, *, server_pid: int | None = None) -> list[dict[str, Any]]:
    """Each rate's figures; with ``server_pid`` (a server spawned here) its CPU per request too."""
    rng = random.Random(17)
    subjects, write_share = plan.subjects, plan.write_share
    # one turn draws from the shared generator, so the members drawn are those drawn before --turns existed
    calls = Calls(rng if plan.turns == 1 else random.Random(19), subjects, plan.turns)
    serial = iter(range(3_000_000, 1 << 62))
    limits = httpx.Limits(max_connections=2000, max_keepalive_connections=2000)
    async with httpx.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=plan.timeout,
                                 limits=limits) as http:
        await _warm_up(http, base, rng, plan, serial)
        results: list[dict[str, Any]] = []

        def shots(rate: float, seconds: float) -> list[Shot]:
            count = max(1, round(rate * seconds))
            return [_shot(rng, subjects, write_share, next(serial), calls) for _ in range(count)]

        first = plan.rates[0]
        for rate in plan.rates:
            progress(f"rate {rate:g}/s for {plan.seconds:g} s…")
            started = cpu.read(server_pid)
            if plan.recovery > 0:  # the recovery run follows this rate's last send, on the same schedule
                then = shots(first, plan.recovery)
                outcomes, elapsed, after = await _open_loop(http, shots(rate, plan.seconds), rate, then, first)
            else:
                outcomes, elapsed, after = await _open_loop(http, shots(rate, plan.seconds), rate)
            served = sum(o.status is not None and 200 <= o.status < 300 for o in [*outcomes, *after])
            results.append(_summary(rate, plan.seconds, outcomes, elapsed))
            results[-1]["cpu"] = cpu.per_request(started, cpu.read(server_pid), served, os.cpu_count() or 1)
            progress(_line(results[-1]))
            progress(cpu.line(results[-1]["cpu"]))
            if plan.recovery > 0:
                results[-1]["recovery"] = _recovery(first, plan.recovery, after, results[0]["p95_ms"])
                progress(f"  back at {first:g}/s: recovered after {results[-1]['recovery']['recovered_after_s']} s")
            await asyncio.sleep(1.0)  # let what is still queued on the server drain
    return results


async def _warm_up(http: httpx.AsyncClient, base: str, rng: random.Random, plan: _Plan, serial: Iterator[int]) -> None:
    """``plan.warmup`` assembles, unmeasured, two at a time, going through the subjects in order: the
    model and the first connections warm up, and with ``--warmup`` at least ``--subjects`` every
    subject's key and pseudonym map are in the server's caches before the first rate, as on a server
    that has been up for a while (without it the first rates also measure those first reads)."""
    async def one(i: int) -> None:
        body = {"subject_id": subject(i % plan.subjects), "query": question(rng, next(serial))}
        try:
            r = await http.post("/api/v1/context/assemble", json=body)
        except httpx.TransportError as exc:
            raise ValueError(f"no answer from {base} ({type(exc).__name__})") from exc
        if r.status_code in (401, 403):
            raise ValueError(f"{base} refused the key ({r.status_code} {_code(r)})")

    if plan.warmup > WARMUP:
        progress(f"warming up: {plan.warmup} assembles over the {plan.subjects} subjects…")
    for start in range(0, plan.warmup, 2):
        await asyncio.gather(*(one(i) for i in range(start, min(start + 2, plan.warmup))))


def _shot(rng: random.Random, subjects: int, write_share: float, serial: int, calls: Calls) -> Shot:
    """``calls``: who a question is about."""
    if rng.random() >= write_share:
        return _assemble(rng, serial, calls)
    who = subject(rng.randrange(subjects))
    if rng.random() < 0.5:
        return Shot("remember", f"/api/v1/subjects/{who}/memories", {"text": fact(rng)})
    said = fact(rng).replace("Le membre ", "Je ", 1)
    return Shot("messages", f"/api/v1/subjects/{who}/messages", {"messages": [{"role": "user", "content": said}]})


def _assemble(rng: random.Random, serial: int, calls: Calls) -> Shot:
    return Shot("assemble", "/api/v1/context/assemble",
                {"subject_id": subject(calls.member()), "query": question(rng, serial)})


async def _open_loop(http: httpx.AsyncClient, shots: Sequence[Shot], rate: float, then: Sequence[Shot] = (),
                     then_rate: float = 1.0) -> tuple[list[Outcome], float, list[Outcome]]:
    """Send ``shots`` at ``rate`` on a fixed schedule, then ``then`` at ``then_rate`` right after the
    last of them; the outcomes of ``shots``, the time from their first scheduled send to their last
    answer, and the outcomes of ``then`` (offsets from their own start)."""
    loop = asyncio.get_running_loop()
    start = loop.time() + 0.05
    after = start + len(shots) / rate
    schedule = [(start + i / rate, start, s) for i, s in enumerate(shots)]
    schedule += [(after + i / then_rate, after, s) for i, s in enumerate(then)]
    tasks = []
    for at, origin, shot in schedule:
        delay = at - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(_send(http, shot, at, origin)))
    main = list(await asyncio.gather(*tasks[:len(shots)]))
    elapsed = max(o.offset_s + o.latency_ms / 1000 for o in main)  # to the last answer of these shots
    return main, elapsed, list(await asyncio.gather(*tasks[len(shots):]))


def _recovery(rate: float, seconds: float, outcomes: Sequence[Outcome], reference_p95: float) -> dict[str, Any]:
    """One-second windows of the run that followed a rate, and when they were back at the first rate's figures."""
    windows: list[dict[str, Any]] = []
    for w in range(max(1, math.ceil(seconds))):
        mine = [o for o in outcomes if w <= o.offset_s < w + 1]
        ok = [o.latency_ms for o in mine if o.status is not None and 200 <= o.status < 300]
        p95 = percentiles(ok)["p95_ms"]
        windows.append({"t_s": w, "sent": len(mine), "ok": len(ok), "p95_ms": p95,
                        "normal": len(ok) == len(mine) and p95 <= RECOVERED_P95 * reference_p95})
    recovered = None
    for w in reversed(windows):
        if not w["normal"]:
            break
        recovered = w["t_s"]
    return {"rate": rate, "seconds": seconds, "reference_p95_ms": reference_p95, "windows": windows,
            "recovered_after_s": recovered}


async def _send(http: httpx.AsyncClient, shot: Shot, scheduled: float, origin: float) -> Outcome:
    loop = asyncio.get_running_loop()
    lag = (loop.time() - scheduled) * 1000
    offset = scheduled - origin
    try:
        r = await http.post(shot.path, json=shot.body)
    except httpx.TimeoutException:
        return Outcome(shot.kind, (loop.time() - scheduled) * 1000, offset, lag, None, "timeout")
    except httpx.TransportError as exc:
        return Outcome(shot.kind, (loop.time() - scheduled) * 1000, offset, lag, None, type(exc).__name__)
    latency = (loop.time() - scheduled) * 1000
    return Outcome(shot.kind, latency, offset, lag, r.status_code, "" if r.is_success else _code(r))


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
    calls = (f"questions in calls of {s['turns']} about one member, {CALLS_AT_ONCE} calls at once"
             if s["turns"] > 1 else "each question about a member drawn at random")
    print(f"server: {s['server']}; {s['memories']} memories over {s['subjects']} subjects; "
          f"writes {s['write_share']:.0%}; {s['seconds']:g} s per rate; {calls}")
    for r in s["rates"]:
        print(_line(r))
        print(cpu.line(r["cpu"]))
        if "recovery" in r:
            back = r["recovery"]
            print(f"    then {back['rate']:g}/s: back at its figures (p95 ≤ {RECOVERED_P95:g} × "
                  f"{back['reference_p95_ms']} ms, nothing refused) after {back['recovered_after_s']} s; "
                  "per second p95 " + ", ".join(f"{w['p95_ms']}" for w in back["windows"]))
        for kind, k in r["by_kind"].items():
            print(f"    {kind:<9} sent {k['sent']:>5}  ok {k['ok']:>5}  p50 {k['p50_ms']} ms  p95 {k['p95_ms']} ms  "
                  f"p99 {k['p99_ms']} ms")
