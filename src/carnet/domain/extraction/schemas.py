"""The JSON schemas an LLM extractor's answers must follow (vLLM enforces them by guided decoding).

Three tasks, one schema each:

- ``FACTS``: the facts worth remembering in a stretch of conversation, and a summary of it;
- ``OBSOLETE``: which known facts a new fact makes obsolete (reconcile's contradiction judgment);
- ``SUMMARY``: a summary of the older part of a long session (summarize-then-forget).

The schemas are written in the strict subset every structured-output backend of vLLM (xgrammar,
guidance, outlines) compiles: every property required, ``additionalProperties: false``, enums and
simple types. Importance is an enum 1..5 rather than a number in [0, 1]: enums are enforced by every
backend (numeric bounds are not, everywhere), and a model grades a short scale more consistently.
The adapter validates each answer again (pydantic) and maps importance onto [0, 1]
(``importance_score``). Pure data: no I/O.
"""

from __future__ import annotations

from typing import Any

# What a fact is about. Codes, not labels: the same in every locale, stored as the record's category.
CATEGORIES = (
    "contrat",  # a contract, product, option, guarantee, its terms or its end
    "sinistre",  # a claim: damage, accident, theft, its file and its state
    "paiement",  # payments, debits, refunds, arrears, amounts owed
    "coordonnees",  # address, phone, email, bank details (as placeholders)
    "situation",  # family, professional or housing situation
    "preference",  # how and when the person wants to be contacted or served
    "demande",  # a pending request, complaint or question
    "decision",  # what was decided or promised, by whom, for when
    "autre",
)

MAX_FACTS = 20
MAX_FACT_CHARS = 400
MAX_SUMMARY_CHARS = 1200
IMPORTANCE_LEVELS = (1, 2, 3, 4, 5)
DATE_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"


def importance_score(level: int) -> float:
    """1..5 onto the record's importance in [0, 1]: 0.2 (anecdotal) … 1.0 (essential)."""
    return round(level / len(IMPORTANCE_LEVELS), 2)


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "required": list(properties), "properties": properties}


FACTS: dict[str, Any] = _object({
    "facts": {
        "type": "array",
        "maxItems": MAX_FACTS,
        "items": _object({
            "text": {"type": "string", "minLength": 1, "maxLength": MAX_FACT_CHARS},
            "category": {"enum": list(CATEGORIES)},
            "importance": {"enum": list(IMPORTANCE_LEVELS)},
            "valid_from": {"anyOf": [{"type": "string", "pattern": DATE_PATTERN}, {"type": "null"}]},
            "worth_remembering": {"type": "boolean"},
        }),
    },
    "summary": {"type": "string", "maxLength": MAX_SUMMARY_CHARS},
})

OBSOLETE: dict[str, Any] = _object({
    "obsolete_ids": {"type": "array", "items": {"type": "string", "maxLength": 8}},
})

SUMMARY: dict[str, Any] = _object({
    "summary": {"type": "string", "maxLength": MAX_SUMMARY_CHARS},
})

# The ``name`` vLLM and the OpenAI shape want beside each schema.
SCHEMA_NAMES = {"facts": "carnet_facts", "obsolete": "carnet_obsolete", "summary": "carnet_summary"}
SCHEMAS = {"facts": FACTS, "obsolete": OBSOLETE, "summary": SUMMARY}
