"""The LLM's answers, checked again on arrival: vLLM's guided decoding should make them follow the
schemas generated from the answer models of ``carnet.domain.extraction.schemas``, but a server
started without a structured-output backend, a proxy that drops ``response_format``, or a cut-off
answer would not. Nothing is repaired
and nothing is dropped in silence: an answer that is not JSON raises ``AnswerRejected("malformed_json")``,
one that is JSON but out of schema ``AnswerRejected("schema_violation")``, and neither carries the
answer's text (it is derived from a customer's words).

An answer is validated with the very model its schema was generated from (strict: no coercion of
``"3"`` into 3, no extra fields), then turned into the domain's ``ExtractedFact``.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from carnet.domain.extraction.model import ExtractedFact
from carnet.domain.extraction.schemas import MEMBER, FactsAnswer, importance_score

_M = TypeVar("_M", bound=BaseModel)


class AnswerRejected(Exception):
    """The answer cannot be used; ``reason`` is a code, never the answer's text."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


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


def facts(answer: FactsAnswer) -> tuple[list[ExtractedFact], int, int]:
    """The facts worth remembering about the member; how many the model itself set aside
    (``worth_remembering`` false) and how many it said are about someone else (``about`` not
    ``membre``): both counted, not stored."""
    kept = [ExtractedFact(text=" ".join(f.text.split()), category=f.category,
                          importance=importance_score(f.importance), valid_from=_day(f.valid_from))
            for f in answer.facts if f.worth_remembering and f.about == MEMBER and f.text.strip()]
    not_member = sum(1 for f in answer.facts if f.worth_remembering and f.about != MEMBER)
    return kept, len(answer.facts) - len(kept) - not_member, not_member


def _day(value: str | None) -> datetime | None:
    return datetime.combine(date.fromisoformat(value), datetime.min.time(), UTC) if value else None
