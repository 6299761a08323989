"""Request and response bodies. Unknown fields are refused (``extra="forbid"``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from carnet.domain.records import HistoryEntry, Kind, Memory, Status
from carnet.services.assemble import Context
from carnet.services.recall import Ranked
from carnet.services.remember import Outcome


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RememberOne(_Strict):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"text": "Le membre habite maintenant à Villeurbanne.", "occurred_at": "2024-06-10T14:00:00+02:00",
         "category": "adresse"}]})

    text: str = Field(min_length=1)
    kind: Kind = Kind.FACT
    occurred_at: AwareDatetime | None = None
    importance: float | None = Field(None, ge=0, le=1)
    category: str | None = Field(None, min_length=1, max_length=64)
    tags: list[str] = Field(default_factory=list, max_length=20)
    retention: str | None = Field(None, min_length=1, max_length=64)
    session_id: str | None = Field(None, min_length=1, max_length=128)


class RectifyBody(_Strict):
    """The fields to correct; absent fields stay as they are."""
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"text": "Le membre préfère être contacté par courrier postal."}]})


    text: str | None = Field(None, min_length=1)
    category: str | None = Field(None, min_length=1, max_length=64)
    importance: float | None = Field(None, ge=0, le=1)
    tags: list[str] | None = Field(None, max_length=20)
    occurred_at: AwareDatetime | None = None
    retention: str | None = Field(None, min_length=1, max_length=64)


class RememberBatch(_Strict):
    memories: list[RememberOne] = Field(min_length=1)


class SearchBody(_Strict):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"query": "Où habite le membre ?", "k": 5}]})

    query: str = Field(min_length=1)
    k: int = Field(10, ge=1)
    kinds: list[Kind] | None = None
    include_superseded: bool = False
    min_relevance: float | None = Field(None, ge=0, le=1)


class AssembleBudgets(_Strict):
    max_memories: int | None = None
    memories_tokens: int | None = None
    max_episodes: int | None = None
    episodes_tokens: int | None = None
    max_procedures: int | None = None
    procedures_tokens: int | None = None
    min_relevance: float | None = None


class LookupBody(_Strict):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"identifier": "SIN-2024-0815"}]})

    identifier: str = Field(min_length=1, max_length=128)
    limit: int = Field(50, ge=1, le=500)
    include_superseded: bool = False


class AssembleBody(_Strict):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"subject_id": "ADH-0042", "query": "Le membre appelle pour son sinistre",
         "budgets": {"max_memories": 10}}]})

    subject_id: str = Field(min_length=1, max_length=128)
    query: str = Field(min_length=1)
    budgets: AssembleBudgets | None = None


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
    return {"memories": [ranked_json(r) for r in ctx.memories], "episodes": [ranked_json(r) for r in ctx.episodes],
            "procedures": [ranked_json(r) for r in ctx.procedures], "prompt": ctx.prompt, "stats": ctx.stats}


def ranked_json(r: Ranked) -> dict[str, Any]:
    return {"memory": memory_json(r.memory), "score": round(r.score, 4), "signals": r.signals.as_dict()}


STATUS_VALUES = [s.value for s in Status]
