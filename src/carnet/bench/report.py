"""Shared helpers for benchmark output: percentiles, tables, the final JSON line."""

from __future__ import annotations

import json
import platform
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np


def percentiles(samples_ms: Sequence[float]) -> dict[str, float]:
    if not samples_ms:
        return {"p50_ms": 0.0, "p95_ms": 0.0, "p99_ms": 0.0}
    a = np.asarray(samples_ms, dtype=np.float64)
    return {f"p{p}_ms": round(float(np.percentile(a, p)), 3) for p in (50, 95, 99)}


def machine() -> str:
    """The CPU model (machines differ: one with AMX embeds about twice as fast), cores and Python."""
    import os

    return f"{cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def cpu_model() -> str:
    """``model name`` from /proc/cpuinfo (Linux); else what the platform module knows."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def emit_json(summary: dict[str, Any]) -> None:
    """The last line of stdout: one JSON object."""
    sys.stdout.flush()
    print(json.dumps(summary, ensure_ascii=False, sort_keys=True))


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
