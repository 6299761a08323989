"""What reconcile did with each remembered text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel

from carnet.entrypoints.presenters.memories import MemoryOut, memory_out
from carnet.services.memories.remember import Outcome


class OutcomeOut(BaseModel):
    action: Literal["created", "merged", "superseded", "unchanged"]
    memory: MemoryOut
    merged_into: str | None
    superseded: list[str]
    rule: str


class RememberOut(BaseModel):
    """A batch answers ``results`` and the id lists; a single memory also has its outcome's fields at the top."""

    results: list[OutcomeOut]
    created: list[str]
    merged: list[str]
    superseded: list[str]
    action: str | None = None
    memory: MemoryOut | None = None
    merged_into: str | None = None
    rule: str | None = None


def outcome_out(o: Outcome) -> OutcomeOut:
    return OutcomeOut(action=o.action, memory=memory_out(o.memory), merged_into=o.merged_into,
                      superseded=list(o.superseded), rule=o.reason)


def remember_out(outcomes: Sequence[Outcome], *, single: bool) -> RememberOut:
    """``single``: one memory was sent (not a batch); its outcome's fields are also at the top. A
    batch's answer leaves those fields unset, so a route with ``response_model_exclude_unset`` omits them."""
    results = [outcome_out(o) for o in outcomes]
    created = [o.memory.id for o in outcomes if o.action in ("created", "superseded")]
    merged = [o.merged_into for o in outcomes if o.merged_into]
    if not single:
        return RememberOut(results=results, created=created, merged=merged,
                           superseded=[s for o in outcomes for s in o.superseded])
    one = results[0]
    return RememberOut(results=results, created=created, merged=merged, superseded=one.superseded,
                       action=one.action, memory=one.memory, merged_into=one.merged_into, rule=one.rule)
