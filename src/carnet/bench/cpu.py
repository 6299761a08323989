"""What a request costs in CPU: the server's, its child processes' (the model's) and the load generator's.

A rate's latencies say how the server behaved; its CPU says why, and how far the machine can go. Each
process's CPU time (user + system, every thread) is read before and after the rate, from
``/proc/<pid>/stat`` for the server and each of its child processes (Linux), from ``os.times`` for this
process, and divided by the requests answered with a success meanwhile. ``cpu_bound_per_s`` is the rate at
which the server and its children would use every core of this machine at that cost: the most any
scheduling could serve here while a request costs what it cost at that rate (refusals cost a little and
are counted in it; batching makes a request cheaper as the rate grows, contention dearer). The load
generator's share is given apart: in production it is the callers', on other machines.

A child process that ended during the rate is missing from the second reading (its time is lost); one
that started is counted from zero. Without ``/proc`` (not Linux) or a server of our own (``--url``),
only the generator's share is known.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from carnet.bench.served import child_pids

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` (all its threads); None when it is gone or unreadable."""
    try:
        return stat_cpu_seconds(Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace"))
    except (OSError, ValueError, IndexError):
        return None


def stat_cpu_seconds(line: str) -> float:
    """``utime + stime`` of a ``/proc/<pid>/stat`` line, in seconds. The command name, in brackets, may
    hold spaces and brackets of its own: the fields are read after the last ``)``."""
    fields = line[line.rindex(")") + 1 :].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime: fields 14 and 15 of the whole line


@dataclass(frozen=True, slots=True)
class Reading:
    wall: float  # time.monotonic()
    generator: float  # this process's CPU seconds
    server: float | None = None
    children: dict[int, float] = field(default_factory=dict)


def read(server_pid: int | None) -> Reading:
    """The CPU seconds of this process, and of ``server_pid`` and its direct children when given."""
    times = os.times()
    generator = times.user + times.system
    if server_pid is None:
        return Reading(time.monotonic(), generator)
    children = {pid: s for pid in child_pids(server_pid) if (s := cpu_seconds(pid)) is not None}
    return Reading(time.monotonic(), generator, cpu_seconds(server_pid), children)


def per_request(before: Reading, after: Reading, served: int, cores: int) -> dict[str, Any]:
    """CPU milliseconds per request ``served`` between two readings, each process's share apart, how many
    cores were busy on average, and the rate at which the server and its children would fill ``cores``."""
    wall = max(after.wall - before.wall, 1e-9)
    generator = max(after.generator - before.generator, 0.0)
    out: dict[str, Any] = {"served": served, "seconds": round(wall, 3), "cores": cores,
                           "generator_ms": _per(generator, served)}
    busy = generator
    if before.server is not None and after.server is not None:
        server = max(after.server - before.server, 0.0)
        children = sum(max(s - before.children.get(pid, 0.0), 0.0) for pid, s in after.children.items())
        busy += server + children
        out["server_ms"] = _per(server, served)
        out["children_ms"] = _per(children, served)
        spent = server + children
        # under one clock tick the time is not measured (and the bound would be infinite)
        out["cpu_bound_per_s"] = round(cores * served / spent, 1) if served and spent >= 1 / _TICKS else None
    out["cores_busy"] = round(busy / wall, 2)
    return out


def _per(seconds: float, served: int) -> float | None:
    return round(seconds * 1000 / served, 2) if served else None


def line(cpu: dict[str, Any]) -> str:
    """One line for the printed report."""
    parts = [f"{name} {cpu[key]} ms" for name, key in (("server", "server_ms"), ("its children", "children_ms"),
                                                       ("this generator", "generator_ms")) if key in cpu]
    bound = cpu.get("cpu_bound_per_s")
    at_most = f"; at that cost {cpu['cores']} cores serve at most {bound}/s" if bound else ""
    return (f"    cpu per answered request: {', '.join(parts)}; {cpu['cores_busy']} of {cpu['cores']} cores busy"
            f"{at_most}")
