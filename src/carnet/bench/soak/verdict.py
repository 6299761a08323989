"""Whether a soak's JSON passes: every target, every fault injected and recovered, the work done that
the checks need, and no invariant broken but the findings a fault may honestly cause (an erasure or an
export cut by a fault, whose answer says so). One list of reasons, empty when it passes: the test
suite's short run asserts it (tests/e2e/test_soak.py), and tests/e2e/test_soak_verdict.py shows it
failing on a server that breaks an invariant on purpose."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from carnet.bench.soak.assistants import OWED

# What a fault may leave, said by the answer itself (docs/benchmarks.md, "Soak"): an erasure answered
# ``complete: false`` with ``residue: ["data_key"]`` while OpenBao is frozen (its key then removed by
# ``carnet backup reapply-erasures``), an export whose tail says ``complete: false``.
ALLOWED = frozenset({"erasure_incomplete", "erasure_left_incomplete", "erased_key_left", "export_incomplete"})
# Outside the fault windows, admission control on a shared 2-core machine may shed a request (503
# ``overloaded``, a code, retried): that, and only that, is allowed there.
ALLOWED_OUTSIDE = frozenset({"503:overloaded"})


def failures(result: dict[str, Any], faults: Sequence[str]) -> list[str]:
    out = [f"fault {w['fault']}: {w['error']}" for w in result["faults"] if w.get("error")]
    if [w["fault"] for w in result["faults"]] != list(faults):
        out.append(f"faults injected {[w['fault'] for w in result['faults']]}, asked {list(faults)}")
    out += [f"target not met: {name}" for name, met in result["targets"].items()
            if not met and name not in ("all", "server_errors_outside_windows_0")]
    out += [f"5xx outside the fault windows: {code}" for code in result["server_errors_outside_by_code"]
            if code not in ALLOWED_OUTSIDE]
    out += [f"invariant broken: {name} ({n})" for name, n in result["invariants"]["violations"].items()
            if name not in ALLOWED]
    intakes, memories, erasures = result["intakes"], result["memories"], result["erasures"]
    checks = {
        "intakes lost": intakes["lost"], "records applied twice": memories["duplicated"],
        "erased subjects found again": erasures["erased_reappeared"],
        "data keys left behind a complete receipt": erasures["data_keys_left_unreported"],
        "data keys left after reapply-erasures": erasures.get("data_keys_left_after_reapply", 0),
    }
    out += [f"{what}: {n}" for what, n in checks.items() if n]
    out += [f"part dead: {name}" for name in result["parts_dead"]]
    # The work the checks need: without it a run "passes" having checked nothing.
    out += [f"no work of kind {kind!r}" for kind in OWED if not result["actions"].get(kind)]
    if not intakes["accepted"]:
        out.append("no intake accepted")
    if not erasures["erased_subjects"]:
        out.append("no subject erased")
    return out
