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
    import os

    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def emit_json(summary: dict[str, Any]) -> None:
    """The last line of stdout: one JSON object."""
    sys.stdout.flush()
    print(json.dumps(summary, ensure_ascii=False, sort_keys=True))


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
