"""The compact results of the MCP reading tools: what a model needs to read a record and act on it
(its id, text and date), without the dozen bookkeeping fields of the REST shape. A tool result lands
in the model's context window, where every character costs tokens and attention: an assembled
context is its prompt plus the ids of the records in it, a few hundred characters around the prompt
instead of several thousand of JSON. ``"format": "full"`` still gives the REST shape
(``carnet.entrypoints.presenters``). The answers of the procedure and forget tools are here too:
shapes of the MCP tools only, defined once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from carnet.domain.procedures import TeamProcedure
from carnet.domain.records import Memory
from carnet.domain.unreadable import Found
from carnet.entrypoints.presenters.memories import iso
from carnet.services.memories.assemble import Context
from carnet.services.memories.reads import Page
from carnet.services.memories.recall import Ranked

Json = dict[str, Any]


def compact_context(ctx: Context) -> Json:
    """The prompt block, the ids of the records it was rendered from (facts, episodes, procedures, in
    that order, then the profile tier's) and the counts."""
    ids = [r.memory.id for r in (*ctx.memories, *ctx.episodes, *ctx.procedures)] + [m.id for m in ctx.profile]
    return {"prompt": ctx.prompt, "ids": ids, "stats": ctx.stats}


def compact_ranked(r: Ranked) -> Json:
    return {"id": r.memory.id, "text": r.memory.text, "score": round(r.score, 4),
            "occurred_at": iso(r.memory.valid_from)}


def compact_results(ranked: Found[Ranked]) -> Json:
    """``SearchOut``'s keys, each result compact; ``unreadable``: records left out because they cannot be read."""
    return {"results": [compact_ranked(r) for r in ranked], "unreadable": len(ranked.unreadable)}


def compact_memory(m: Memory) -> Json:
    return {"id": m.id, "kind": m.kind.value, "text": m.text, "occurred_at": iso(m.valid_from)}


def compact_page(page: Page) -> Json:
    """``PageOut``'s keys, each record compact."""
    return {"items": [compact_memory(m) for m in page.items], "next_cursor": page.next_cursor,
            "unreadable": len(page.unreadable)}


def compact_procedures(found: Sequence[TeamProcedure]) -> Json:
    """What an agent needs of each approved procedure: no key ids, no keywords, no dates."""
    return {"items": [{"id": p.id, "text": p.text, "status": p.status.value, "agent_id": p.agent_id,
                       "queue": p.queue} for p in found]}


def proposed(p: TeamProcedure) -> Json:
    return {"id": p.id, "status": p.status.value}


def forgotten(memory_id: str) -> Json:
    return {"forgotten": memory_id}
