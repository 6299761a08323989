"""Readiness: each dependency's check, by name."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


class ReadyOut(BaseModel):
    status: Literal["ready", "not_ready"]
    checks: dict[str, str]


def ready_out(checks: dict[str, str]) -> ReadyOut:
    """``checks``: "ok" or the failing dependency's error code, per dependency."""
    return ReadyOut(status="ready" if all(v == "ok" for v in checks.values()) else "not_ready", checks=checks)
