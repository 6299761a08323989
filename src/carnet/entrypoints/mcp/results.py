"""Tool results, and the one place Carnet errors become MCP tool errors.

A failed call is a tool result with ``is_error`` set (the model reads it and can correct itself),
not a JSON-RPC error: ``{"error": {"code", "message", ...}}`` like the REST API, in the structured
content and as JSON text for clients that only show text. Messages are the errors' own, which never
carry personal data or the subject id; argument errors name the fields, never the rejected values.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from mcp_types import CallToolResult, TextContent
from pydantic import ValidationError

from carnet.domain.reconcile.values import error_fields
from carnet.entrypoints.presenters.errors import error_body
from carnet.errors import CarnetError

Json = dict[str, Any]

# The context fields an error may show (the same as the REST edge's): ids and counts, no content.
_SAFE = ("index", "memory_id", "intake_id", "retry_after")


def ok(data: Json) -> CallToolResult:
    return _result(data, is_error=False)


def failed(exc: CarnetError) -> CallToolResult:
    safe = {k: v for k, v in exc.context.items() if k in _SAFE}
    return error(exc.code, exc.message, **safe)


def invalid_arguments(exc: ValidationError, known: Collection[str]) -> CallToolResult:
    """``known``: the tool's argument names; any other name in an error is ``<unknown field>``."""
    fields = error_fields(exc.errors(), known)
    return error("invalid_request", "the arguments are malformed", fields=fields)


def error(code: str, message: str, **extra: object) -> CallToolResult:
    return _result(error_body(code, message, **extra), is_error=True)


def _result(data: Json, *, is_error: bool) -> CallToolResult:
    text = json.dumps(data, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data, is_error=is_error)
