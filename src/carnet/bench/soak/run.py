"""``carnet bench soak``: the production topology on this machine, concurrent assistants of two
tenants for ``--minutes``, faults on a schedule, invariants checked on every answer and at the end,
one JSON object (the last line with ``--json``).

``soak(topology, ...)`` runs on a topology already started (the test suite starts one for its
end-to-end test and the soak's short run); ``run`` starts one, soaks it, and reports.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from carnet.bench.report import emit_json, machine, progress
from carnet.bench.soak import final, summary
from carnet.bench.soak.assistants import Assistant, Keys
from carnet.bench.soak.client import RoundRobin
from carnet.bench.soak.faults import Injector, schedule
from carnet.bench.soak.ledger import Ledger, new_marker
from carnet.bench.soak.stack import Topology

TENANTS = ("soak-a", "soak-b")
KEYS = {f"{tenant}:{role}": (tenant, role) for tenant in TENANTS for role in ("agent", "dpo")}


def run(*, minutes: float, faults: Sequence[str], assistants: int, json_out: bool, workdir: Path | None) -> None:
    progress("starting the topology (PostgreSQL, OpenBao, the Qdrant test server, 2 APIs, 2 workers)")
    if workdir is not None:
        workdir.mkdir(parents=True, exist_ok=True)
    with Topology(keys=KEYS, root=workdir) as topology:
        result = soak(topology, seconds=minutes * 60, faults=faults, assistants=assistants)
    _print(result)
    if json_out:
        emit_json(result)


def soak(topology: Topology, *, seconds: float, faults: Sequence[str], assistants: int = 3) -> dict[str, Any]:
    keys = {t: Keys(topology.keys[f"{t}:agent"], topology.keys[f"{t}:dpo"]) for t in TENANTS}
    started, since = time.monotonic(), datetime.now(UTC).isoformat()
    http, ledger, stop = RoundRobin(topology.bases, started=started), Ledger(), threading.Event()
    team = [Assistant(name=f"{tenant}-{n}", tenant=tenant, keys=keys[tenant], other_tenant=other, http=http,
                      ledger=ledger, stop=stop, seed=1000 * i + n)
            for i, (tenant, other) in enumerate(zip(TENANTS, reversed(TENANTS), strict=True))
            for n in range(assistants)]
    planned = schedule(seconds, faults)
    injector = Injector(topology, planned, started=started, probe=lambda: _probe(topology, keys[TENANTS[0]]))
    progress(f"soak: {len(team)} assistants for {seconds:.0f} s, faults at "
             + ", ".join(f"{at:.0f} s {fault}" for at, fault in planned))
    for thread in (*team, injector):
        thread.start()
    time.sleep(seconds)  # the run's length
    stop.set()
    for assistant in team:
        assistant.join()
    injector.join()
    progress(f"soak: stopped after {time.monotonic() - started:.0f} s; final checks")
    calls, windows = http.snapshot(), injector.snapshot()
    http.close()
    checks = RoundRobin(topology.bases, started=started)
    try:
        intakes = final.drain(checks, ledger, keys)
        memories = final.check_live(checks, ledger, keys)
        erasures: dict[str, Any] = {**final.check_erased(checks, ledger, keys, len(topology.bases)),
                                    **final.keys_left(topology.bao.root(), ledger)}
        if erasures["data_keys_left"]:
            erasures["reapply_erasures"] = _reapply(topology, since)
            erasures["data_keys_left_after_reapply"] = final.keys_left(topology.bao.root(), Ledger.of(ledger))[
                "data_keys_left"]
    finally:
        checks.close()
    result: dict[str, Any] = {
        "machine": machine(), "seconds": round(seconds), "faults_asked": list(faults), "assistants": len(team),
        "apis": len(topology.api_parts), "workers": len(topology.worker_parts),
        "faults": [w.as_dict() for w in windows], **summary.requests(calls, windows),
        "actions": dict(sorted(sum((a.done for a in team), Counter()).items())),
        "intakes": {**intakes, "at_their_subjects_erasure": dict(sorted(ledger.at_erasure.items()))},
        "memories": memories, "erasures": erasures,
        "invariants": summary.invariants(ledger),
        "final_requests": dict(sorted(Counter(f"{c.route} {c.status}" for c in checks.snapshot()).items())),
        "parts_dead": {p.name: _tail(p.log) for p in (*topology.api_parts, *topology.worker_parts) if not p.alive()},
    }
    result["targets"] = summary.targets(result)
    return result


def _reapply(topology: Topology, since: str) -> dict[str, Any]:
    """The operator's remedy for a data key an erasure left (docs/operations.md): the ledger applied again."""
    done = topology.command("backup", "reapply-erasures", "--since", since)
    lines = done.stdout.strip().splitlines()
    try:
        return {"exit": done.returncode, **json.loads(lines[-1])}
    except (IndexError, ValueError):
        return {"exit": done.returncode, "stderr": done.stderr[-1500:]}


def _tail(log: Path) -> str:
    try:
        return log.read_text(errors="replace")[-1500:]
    except OSError as exc:
        return f"no log: {exc}"


def _probe(topology: Topology, keys: Keys) -> bool:
    """A write and a read through every API that is up (each directly, not round robin)."""
    for base in [part.base for part in topology.api_parts if part.up]:
        with httpx.Client(base_url=base, timeout=10, headers={"Authorization": f"Bearer {keys.agent}"}) as c:
            try:
                wrote = c.post("/api/v1/subjects/soak-probe/memories",
                               json={"text": f"Sonde de reprise {new_marker()}."})
                read = c.post("/api/v1/subjects/soak-probe/search", json={"query": "sonde"})
            except httpx.TransportError:
                return False
            if wrote.status_code != 201 or read.status_code != 200:
                return False
    return True


def _print(r: dict[str, Any]) -> None:
    print(f"soak: {r['seconds']} s, {r['apis']} APIs, {r['workers']} workers, {r['assistants']} assistants "
          f"({r['machine']})")
    for w in r["faults"]:
        print(f"  {w['fault']:<15} {w['start_s']:>6.1f}-{w['end_s']:<6.1f} s  recovered in {w['recovered_s']} s  "
              f"others restarted: {w['others_restarted'] or 'none'}{'  ' + w['error'] if w['error'] else ''}")
    for route, statuses in r["requests"].items():
        p95 = r["p95_ms"][route]
        print(f"  {route:<14} {statuses}  p95 {p95['outside']} ms outside, {p95['in_fault_windows']} ms in windows")
    print(f"  intakes {r['intakes']}")
    print(f"  5xx outside windows {r['server_errors_outside_windows']}, inside {r['server_errors_inside_windows']}")
    print(f"  invariants {r['invariants']['violations'] or 'all held'}")
    print(f"  targets {r['targets']}")
