"""How records are ranked (``CARNET_SCORING__*``) and how a context is assembled from them (``CARNET_ASSEMBLE__*``)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ScoringSettings(BaseModel):
    """Weights of the final score; they need not sum to 1 (the score is a weighted mean)."""

    w_relevance: float = Field(0.70, ge=0)
    w_importance: float = Field(0.10, ge=0)
    w_recency: float = Field(0.10, ge=0)
    w_frequency: float = Field(0.05, ge=0)
    w_confidence: float = Field(0.05, ge=0)
    recency_half_life_days: float = Field(90.0, gt=0)
    # Dense/keyword fusion inside the relevance signal (see carnet.domain.scoring).
    sparse_weight: float = Field(0.25, ge=0, le=1)
    candidates: int = Field(60, ge=1, le=1000)
    # Floor on the calibrated relevance for plain searches (assemble has its own, stricter one).
    min_relevance: float = Field(0.0, ge=0, le=1)


class AssembleSettings(BaseModel):
    memories: int = Field(15, ge=1, le=200)
    episodes: int = Field(3, ge=0, le=50)
    procedures: int = Field(3, ge=0, le=50)
    memory_tokens: int = Field(1200, ge=1)
    episode_tokens: int = Field(600, ge=0)
    procedure_tokens: int = Field(400, ge=0)
    # The profile tier (how to reach and treat the person: channel and hours, accessibility,
    # vulnerability, consent), in every context whatever the query; 0 items or 0 tokens turns it off.
    profile: int = Field(8, ge=0, le=50)
    profile_tokens: int = Field(300, ge=0)
    # Calibrated scale: 0 is the median cosine of an unrelated question→fact pair, 1 of a paraphrase.
    # Tuned on the French scenarios (docs/benchmarks.md): higher floors dropped answers e5-small
    # ranks by keywords or case references rather than by cosine.
    min_relevance: float = Field(0.0, ge=0, le=1)
