"""The error body, the same over REST and MCP: ``{"error": {"code", "message", ...}}``."""

from __future__ import annotations

from typing import Any


def error_body(code: str, message: str, **extra: object) -> dict[str, Any]:
    """``extra``: context fields safe to show (ids, counts, field names), never a rejected value."""
    return {"error": {"code": code, "message": message, **extra}}
