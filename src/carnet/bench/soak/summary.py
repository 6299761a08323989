"""The soak's JSON: requests by route and status, p95 per route in and out of the fault windows,
5xx outside them (a failure) and inside them (each should be a 503 with a code), the faults and
their recovery, the invariants and whether every target is met."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from carnet.bench.report import percentiles
from carnet.bench.soak.client import Call
from carnet.bench.soak.faults import Window
from carnet.bench.soak.ledger import Ledger

_SAMPLES = 20


def _status(call: Call) -> str:
    return str(call.status) if call.status is not None else f"transport:{call.code}"


def requests(calls: Sequence[Call], windows: Sequence[Window]) -> dict[str, Any]:
    by_route: dict[str, Counter[str]] = defaultdict(Counter)
    timing: dict[str, dict[str, list[float]]] = defaultdict(lambda: {"in": [], "out": []})
    outside: list[dict[str, Any]] = []
    inside: Counter[str] = Counter()
    by_fault: dict[str, Counter[str]] = defaultdict(Counter)
    transport_outside = 0
    for call in calls:
        by_route[call.route][_status(call)] += 1
        overlapping = [w.fault for w in windows if w.overlaps(call.start, call.end, call.api)]
        during = bool(overlapping)
        timing[call.route]["in" if during else "out"].append(call.ms)
        if call.status is not None and call.status >= 500:
            if during:
                inside[f"{call.status}:{call.code}"] += 1
                by_fault["+".join(sorted(set(overlapping)))][f"{call.status}:{call.code}"] += 1
            else:
                outside.append({"route": call.route, "status": call.status, "code": call.code,
                                "at_s": round(call.start, 1), "api": call.api})
        elif call.status is None and not during and call.code != "ConnectError":
            transport_outside += 1
    not_503 = sum(n for key, n in inside.items() if not key.startswith("503:") or key.endswith(":None"))
    return {
        "requests": {route: dict(sorted(c.items())) for route, c in sorted(by_route.items())},
        "p95_ms": {route: {"in_fault_windows": percentiles(t["in"])["p95_ms"] if t["in"] else None,
                           "outside": percentiles(t["out"])["p95_ms"] if t["out"] else None,
                           "n_in": len(t["in"]), "n_out": len(t["out"])} for route, t in sorted(timing.items())},
        "server_errors_outside_windows": len(outside), "server_errors_outside_samples": outside[:_SAMPLES],
        "server_errors_outside_by_code": dict(sorted(Counter(f"{o['status']}:{o['code']}" for o in outside).items())),
        "server_errors_inside_windows": dict(sorted(inside.items())),
        "server_errors_inside_not_503_with_code": not_503,
        "server_errors_inside_by_fault": {f: dict(sorted(c.items())) for f, c in sorted(by_fault.items())},
        "transport_errors_outside_windows": transport_outside,
    }


def invariants(ledger: Ledger) -> dict[str, Any]:
    v = ledger.violations
    return {"cross_tenant_results": v["cross_tenant"], "cross_subject_results": v["cross_subject"],
            "erased_reappeared": v["erased_reappeared"], "forgotten_reappeared": v["forgotten_reappeared"],
            "erased_under_hold": v["erased_under_hold"], "replays_answered_with_a_new_record": v["replay_new_record"],
            "live_subject_not_found": v["live_subject_not_found"],
            "violations": dict(sorted(v.items())), "violation_samples": ledger.samples}


def targets(summary: dict[str, Any]) -> dict[str, bool]:
    intakes, inv = summary["intakes"], summary["invariants"]
    met = {
        "intakes_lost_0": intakes["lost"] == 0,
        "applied_twice_0": summary["memories"]["duplicated"] == 0 and inv["replays_answered_with_a_new_record"] == 0,
        "erased_reappeared_0": inv["erased_reappeared"] == 0 and summary["erasures"]["erased_reappeared"] == 0
        and summary["erasures"]["data_keys_left_unreported"] == 0,
        "cross_tenant_0": inv["cross_tenant_results"] == 0,
        "server_errors_outside_windows_0": summary["server_errors_outside_windows"] == 0,
        "inside_windows_503_with_code": summary["server_errors_inside_not_503_with_code"] == 0,
        "recovered_without_restarting_others": all(
            w["recovered_s"] is not None and not w["others_restarted"] and w["error"] is None
            for w in summary["faults"]) and not summary["parts_dead"],
    }
    met["all"] = all(met.values())
    return met
