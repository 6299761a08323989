"""The LLM's answers, checked again on arrival: vLLM's guided decoding should make them follow the
schemas of ``carnet.domain.extraction.schemas``, but a server started without a structured-output
backend, a proxy that drops ``response_format``, or a cut-off answer would not. Nothing is repaired
and nothing is dropped in silence: an answer that is not JSON raises ``AnswerRejected("malformed_json")``,
one that is JSON but out of schema ``AnswerRejected("schema_violation")``, and neither carries the
answer's text (it is derived from a customer's words).

The pydantic models below mirror the JSON schemas (a unit test holds them together) and are strict:
no coercion of ``"3"`` into 3, no extra fields.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from typing import Annotated, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from carnet.domain.extraction.model import ExtractedFact
from carnet.domain.extraction.schemas import (
    CATEGORIES,
    DATE_PATTERN,
    IMPORTANCE_LEVELS,
    MAX_FACT_CHARS,
    MAX_FACTS,
    MAX_SUMMARY_CHARS,
    importance_score,
)

_M = TypeVar("_M", bound=BaseModel)


class AnswerRejected(Exception):
    """The answer cannot be used; ``reason`` is a code, never the answer's text."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class FactAnswer(_Strict):
    text: Annotated[str, Field(min_length=1, max_length=MAX_FACT_CHARS)]
    category: str
    importance: int
    valid_from: Annotated[str, Field(pattern=DATE_PATTERN)] | None
    worth_remembering: bool

    @field_validator("category")
    @classmethod
    def _category(cls, v: str) -> str:
        if v not in CATEGORIES:
            raise ValueError("unknown category")
        return v

    @field_validator("importance")
    @classmethod
    def _importance(cls, v: int) -> int:
        if v not in IMPORTANCE_LEVELS:
            raise ValueError("importance out of range")
        return v

    @field_validator("valid_from")
    @classmethod
    def _date(cls, v: str | None) -> str | None:
        if v is not None:
            date.fromisoformat(v)  # 2025-02-30 matches the pattern but is no date
        return v


class FactsAnswer(_Strict):
    facts: Annotated[list[FactAnswer], Field(max_length=MAX_FACTS)]
    summary: Annotated[str, Field(max_length=MAX_SUMMARY_CHARS)]


class ObsoleteAnswer(_Strict):
    obsolete_ids: list[Annotated[str, Field(max_length=8)]]


class SummaryAnswer(_Strict):
    summary: Annotated[str, Field(max_length=MAX_SUMMARY_CHARS)]


def parse(content: str, model: type[_M]) -> _M:
    """``content`` as ``model``, or ``AnswerRejected`` (raised without the validation error, whose
    message quotes the input)."""
    try:
        json.loads(content)
    except ValueError:
        raise AnswerRejected("malformed_json") from None
    try:
        return model.model_validate_json(content)
    except ValidationError:
        raise AnswerRejected("schema_violation") from None


def facts(answer: FactsAnswer) -> tuple[list[ExtractedFact], int]:
    """The facts worth remembering, and how many the model itself set aside (``worth_remembering``
    false): they are counted, not stored."""
    kept = [ExtractedFact(text=" ".join(f.text.split()), category=f.category,
                          importance=importance_score(f.importance), valid_from=_day(f.valid_from))
            for f in answer.facts if f.worth_remembering and f.text.strip()]
    return kept, len(answer.facts) - len(kept)


def _day(value: str | None) -> datetime | None:
    return datetime.combine(date.fromisoformat(value), datetime.min.time(), UTC) if value else None
