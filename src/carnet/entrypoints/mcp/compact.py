"""The compact results of the MCP reading tools: what a model needs to read a record and act on it
(its id, text and date), without the dozen bookkeeping fields of the REST shape. A tool result lands
in the model's context window, where every character costs tokens and attention: an assembled
context is its prompt plus the ids of the records in it, a few hundred characters around the prompt
instead of several thousand of JSON. ``"format": "full"`` still gives the REST shape."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from carnet.domain.records import Memory
from carnet.services.memories.assemble import Context
from carnet.services.memories.recall import Ranked

Json = dict[str, Any]


def compact_context(ctx: Context) -> Json:
    """The prompt block, the ids of the records it was rendered from (facts, episodes, procedures, in
    that order, then the profile tier's) and the counts."""
    ids = [r.memory.id for r in (*ctx.memories, *ctx.episodes, *ctx.procedures)] + [m.id for m in ctx.profile]
    return {"prompt": ctx.prompt, "ids": ids, "stats": ctx.stats}


def compact_ranked(r: Ranked) -> Json:
    return {"id": r.memory.id, "text": r.memory.text, "score": round(r.score, 4),
            "occurred_at": _iso(r.memory.valid_from)}


def compact_memory(m: Memory) -> Json:
    return {"id": m.id, "kind": m.kind.value, "text": m.text, "occurred_at": _iso(m.valid_from)}


def _iso(at: datetime | None) -> str | None:
    return at.isoformat() if at is not None else None
