"""A presented model as plain JSON values: what an MCP tool result, a ready ``JSONResponse`` or the CLI
carries (enums as their values, keys in the model's field order)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


def as_json(out: BaseModel) -> dict[str, Any]:
    return out.model_dump(mode="json")
