"""A ranked record (its score and the signals behind it) and a search's answer."""

from __future__ import annotations

from pydantic import BaseModel, Field

from carnet.domain.unreadable import Found
from carnet.entrypoints.presenters.memories import MemoryOut, memory_out
from carnet.services.memories.recall import Ranked


class SignalsOut(BaseModel):
    cosine: float
    relevance: float
    keyword: float
    importance: float
    recency: float
    frequency: float
    confidence: float


class RankedOut(BaseModel):
    memory: MemoryOut
    score: float
    signals: SignalsOut


class SearchOut(BaseModel):
    results: list[RankedOut]
    unreadable: int = Field(0, description="Candidates left out because they cannot be read.")


def ranked_out(r: Ranked) -> RankedOut:
    """The signals rounded as the scoring module rounds them (``Signals.as_dict``)."""
    return RankedOut(memory=memory_out(r.memory), score=round(r.score, 4),
                     signals=SignalsOut.model_validate(r.signals.as_dict()))


def search_out(ranked: Found[Ranked]) -> SearchOut:
    return SearchOut(results=[ranked_out(r) for r in ranked], unreadable=len(ranked.unreadable))
