"""Request and response bodies. Unknown fields are refused (``extra="forbid"``)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool

from carnet.domain.profile import profile_kinds
from carnet.domain.reconcile.values import MAX_SAFE_INT, Fraction, Instant, Int, Label, Text
from carnet.domain.records import HistoryEntry, Kind, Memory, Status
from carnet.services.memories.assemble import Context
from carnet.services.memories.recall import Ranked
from carnet.services.memories.remember import Outcome
from carnet.services.procedures import TeamPick


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# The value rules of every field (carnet.domain.reconcile.values): strict JSON types, bounded, clean text.
Category = Annotated[Label, Field(max_length=64)]
Tag = Annotated[Label, Field(max_length=64)]
Retention = Annotated[Label, Field(max_length=64)]
SessionId = Annotated[Label, Field(max_length=128)]
Identifier = Annotated[Label, Field(max_length=128)]
Budget = Annotated[Int, Field(ge=-MAX_SAFE_INT, le=1_000_000)]  # zero and below: invalid_budget, from the service


class RememberOne(_Strict):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"text": "Le membre habite maintenant à Villeurbanne.", "occurred_at": "2024-06-10T14:00:00+02:00",
         "category": "adresse"}]})

    text: Text
    kind: Kind = Kind.FACT
    occurred_at: Instant | None = None
    importance: Fraction | None = None
    category: Category | None = None
    tags: list[Tag] = Field(default_factory=list, max_length=20)
    retention: Retention | None = None
    session_id: SessionId | None = None


class RectifyBody(_Strict):
    """The fields to correct; absent fields stay as they are."""
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"text": "Le membre préfère être contacté par courrier postal."}]})


    text: Text | None = None
    category: Category | None = None
    importance: Fraction | None = None
    tags: list[Tag] | None = Field(None, max_length=20)
    occurred_at: Instant | None = None
    retention: Retention | None = None


class RememberBatch(_Strict):
    memories: list[RememberOne] = Field(min_length=1)


class SearchBody(_Strict):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"query": "Où habite le membre ?", "k": 5}]})

    query: Text
    k: Annotated[Int, Field(ge=1, le=10_000)] = 10  # the service holds k to CARNET_API__MAX_K
    kinds: list[Kind] | None = Field(None, max_length=3)
    include_superseded: StrictBool = False
    min_relevance: Fraction | None = None


class AssembleBudgets(_Strict):
    max_memories: Budget | None = None
    memories_tokens: Budget | None = None
    max_episodes: Budget | None = None
    episodes_tokens: Budget | None = None
    max_procedures: Budget | None = None
    procedures_tokens: Budget | None = None
    max_profile: Budget | None = None
    profile_tokens: Budget | None = None
    min_relevance: float | None = Field(None, allow_inf_nan=False, strict=True)  # out of [0, 1]: invalid_budget


class LookupBody(_Strict):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"identifier": "SIN-2024-0815"}]})

    identifier: Identifier
    limit: Annotated[Int, Field(ge=1, le=500)] = 50
    include_superseded: StrictBool = False


class AssembleBody(_Strict):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"subject_id": "ADH-0042", "query": "Le membre appelle pour son sinistre",
         "budgets": {"max_memories": 10}}]})

    subject_id: Identifier
    query: Text
    budgets: AssembleBudgets | None = None
    agent_id: Identifier | None = Field(None, description="The caller's agent: team procedures scoped to it apply.")
    queue: Identifier | None = Field(None, description="The call's queue: team procedures scoped to it apply.")


def _iso(at: datetime | None) -> str | None:
    return at.isoformat() if at else None


def memory_json(m: Memory) -> dict[str, Any]:
    """The public view of a record: no tenant, no subject hash, no vectors."""
    return {
        "id": m.id,
        "kind": m.kind.value,
        "text": m.text,
        "status": m.status.value,
        "category": m.category,
        "tags": list(m.tags),
        "importance": m.importance,
        "confidence": round(m.confidence, 4),
        "access_count": m.access_count,
        "reinforcement_count": m.reinforcement_count,
        "occurred_at": _iso(m.valid_from),
        "valid_from": _iso(m.valid_from),
        "valid_to": _iso(m.valid_to),
        "recorded_at": _iso(m.recorded_at),
        "updated_at": _iso(m.updated_at),
        "last_accessed_at": _iso(m.last_accessed_at),
        "expires_at": _iso(m.expires_at),
        "retention": m.retention,
        "superseded_by": m.superseded_by,
        "sources": [{"kind": s.kind, "ref": s.ref, "session_id": s.session_id} for s in m.sources],
        "session_id": m.session_id,
        "agent_id": m.agent_id,
        "special_categories": list(m.special),
    }


def history_json(e: HistoryEntry) -> dict[str, Any]:
    return {"at": e.at.isoformat(), "action": e.action, "actor": e.actor, "detail": e.detail}


def outcome_json(o: Outcome) -> dict[str, Any]:
    """What reconcile did with one remembered text."""
    return {"action": o.action, "memory": memory_json(o.memory), "merged_into": o.merged_into,
            "superseded": list(o.superseded), "rule": o.reason}


def context_json(ctx: Context) -> dict[str, Any]:
    return {"profile": [profile_json(m) for m in ctx.profile],
            "memories": [ranked_json(r) for r in ctx.memories], "episodes": [ranked_json(r) for r in ctx.episodes],
            "procedures": [ranked_json(r) for r in ctx.procedures],
            "team_procedures": [team_json(t) for t in ctx.team], "prompt": ctx.prompt, "stats": ctx.stats}


def team_json(t: TeamPick) -> dict[str, Any]:
    """A team procedure in a context: no key ids (who proposed or approved it is the console's business)."""
    p = t.procedure
    return {"id": p.id, "text": p.text, "agent_id": p.agent_id, "queue": p.queue, "score": round(t.score, 4),
            "conflict": bool(t.conflicts),
            "conflicts": [{"channel": c.channel, "constraint": c.constraint} for c in t.conflicts]}


def profile_json(m: Memory) -> dict[str, Any]:
    return {"memory": memory_json(m), "kinds": list(profile_kinds(m.text))}


def ranked_json(r: Ranked) -> dict[str, Any]:
    return {"memory": memory_json(r.memory), "score": round(r.score, 4), "signals": r.signals.as_dict()}


STATUS_VALUES = [s.value for s in Status]
