"""Request bodies. Unknown fields are refused (``extra="forbid"``). The response bodies are the
presenters' (``carnet.entrypoints.presenters``), shared with the MCP tools."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictBool

from carnet.domain.reconcile.values import MAX_SAFE_INT, Fraction, Instant, Int, Label, Text
from carnet.domain.records import Kind


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


class RestoreBody(_Strict):
    """Why the record is still true: the person's words, kept only sealed (as a label, when the tenant
    keeps corrections), never in history or audit."""
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"reason": "Le membre a gardé son adresse à Lyon, Villeurbanne est l'adresse de sa fille."}]})

    reason: Annotated[Text, Field(max_length=1000)] | None = None


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
