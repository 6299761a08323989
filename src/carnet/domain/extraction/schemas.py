"""The answers an LLM extractor must give, as pydantic models: the one definition of each answer's
shape. The JSON schema vLLM enforces by guided decoding (``response_format``) is generated from the
model (``answer_schema``), and the adapter validates the answer with the same model on arrival, so
what the model is told and what Carnet accepts cannot drift apart.

Three tasks, one answer each:

- ``FactsAnswer``: the facts worth remembering in a stretch of conversation (one statement per topic,
  each saying whom it is about), and a summary of it;
- ``ObsoleteAnswer``: which known facts a new fact makes obsolete (reconcile's contradiction judgment);
- ``SummaryAnswer``: a summary of the older part of a long session (summarize-then-forget).

The models stay in the strict subset every structured-output backend of vLLM (xgrammar, guidance,
outlines) compiles: every field required (no defaults), no extra field (``additionalProperties:
false``), enums (``Literal``) and simple types; ``answer_schema`` inlines nested models and drops the
titles, so the schema has no ``$ref``. Importance is an enum 1..5 rather than a number in [0, 1]:
enums are enforced by every backend (numeric bounds are not, everywhere), and a model grades a short
scale more consistently; it is mapped onto [0, 1] by ``importance_score``. The models are strict: no
coercion of ``"3"``, ``3.0`` or ``true`` into 3, no extra fields. Pure data: no I/O.
"""

from __future__ import annotations

import copy
import functools
from datetime import date
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

# What a fact is about. Codes, not labels: the same in every locale, stored as the record's category.
Category = Literal[
    "contrat",  # a contract, product, option, guarantee, its terms or its end
    "sinistre",  # a claim: damage, accident, theft, its file and its state
    "paiement",  # payments, debits, refunds, arrears, amounts owed
    "coordonnees",  # address, phone, email, bank details (as placeholders)
    "situation",  # family, professional or housing situation
    "preference",  # how and when the person wants to be contacted or served
    "demande",  # a pending request, complaint or question
    "decision",  # what was decided or promised, by whom, for when
    "autre",
]
CATEGORIES: tuple[str, ...] = get_args(Category)

# Whom a fact is about: the member (the subject the memories are kept for), or someone on the line for
# them or beside them. Only ``membre`` facts are stored; the others are counted (``LlmStats.not_member``).
# A relative's or a guardian's words that concern the member's contract are a fact about the member.
About = Literal[
    "membre",  # the member: their contracts, claims, payments, situation, preferences, requests
    "proche",  # a relative's own affairs (a spouse, a child, a parent), not the member's
    "tuteur",  # a guardian or curator acting for the member, about themselves
    "relais",  # a relay operator (sign language, interpreter) or another intermediary, about themselves
    "autre",  # anyone else (the advisor, a third party)
]
ABOUT: tuple[str, ...] = get_args(About)
MEMBER: str = "membre"

MAX_FACTS = 20
MAX_FACT_CHARS = 400
MAX_SUMMARY_CHARS = 1200
DATE_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"


def _exact_int(value: object) -> object:
    """A ``Literal`` of ints accepts ``true`` and ``3.0`` even in strict mode: the answer must say 3."""
    if type(value) is not int:
        raise ValueError("importance must be an integer")
    return value


Importance = Annotated[Literal[1, 2, 3, 4, 5], BeforeValidator(_exact_int)]
IMPORTANCE_LEVELS: tuple[int, ...] = get_args(get_args(Importance)[0])


def importance_score(level: int) -> float:
    """1..5 onto the record's importance in [0, 1]: 0.2 (anecdotal) … 1.0 (essential)."""
    return round(level / len(IMPORTANCE_LEVELS), 2)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class FactAnswer(_Strict):
    text: Annotated[str, Field(min_length=1, max_length=MAX_FACT_CHARS)]
    category: Category
    importance: Importance
    valid_from: Annotated[str, Field(pattern=DATE_PATTERN)] | None
    worth_remembering: bool
    about: About

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


# Per task: the ``name`` vLLM and the OpenAI shape want beside the schema, and the answer's model.
# ``carnet_facts_v2``: version 1 (``carnet_facts``) had no ``about``; an answer is read with the model its
# request's schema was generated from, so a version-1 answer is refused (``schema_violation``), never guessed.
SCHEMA_NAMES = {"facts": "carnet_facts_v2", "obsolete": "carnet_obsolete", "summary": "carnet_summary"}
ANSWERS: dict[str, type[BaseModel]] = {"facts": FactsAnswer, "obsolete": ObsoleteAnswer, "summary": SummaryAnswer}


def answer_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model.model_json_schema()`` as sent to vLLM: nested models inlined, titles left out (the
    model reads field names, not pydantic's title-cased copies of them). A copy: callers may keep it."""
    return copy.deepcopy(_generated(model))


@functools.cache
def _generated(model: type[BaseModel]) -> dict[str, Any]:
    generated = model.model_json_schema()
    return _plain(generated, generated.get("$defs", {}))


def _plain(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str):
        return _plain(defs[ref.removeprefix("#/$defs/")], defs)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("title", "$defs"):
            continue
        if key == "properties":
            out[key] = {name: _plain(sub, defs) for name, sub in value.items()}
        elif key == "items":
            out[key] = _plain(value, defs)
        elif key == "anyOf":
            out[key] = [_plain(sub, defs) for sub in value]
        else:
            out[key] = value
    return out


FACTS = answer_schema(FactsAnswer)
OBSOLETE = answer_schema(ObsoleteAnswer)
SUMMARY = answer_schema(SummaryAnswer)
SCHEMAS = {task: answer_schema(model) for task, model in ANSWERS.items()}
