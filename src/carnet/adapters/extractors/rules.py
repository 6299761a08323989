"""The rule-based ``Extractor``: the embedded default when no LLM is configured.

A thin adapter over ``carnet.domain.extraction.rules`` (pure regular expressions, French and
English): it never fails for backend reasons, so it never raises ``ExtractionFailed``, and it
spends no tokens. Contradictions between facts are left to reconcile's slot rules, which already
judge them without an LLM: ``obsolete`` returns nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from carnet.domain.extraction.model import Extraction
from carnet.domain.extraction.rules import extract
from carnet.domain.intake import Message


class RuleExtractor:
    """``Extractor`` port, no configuration: ``RuleExtractor()``."""

    @property
    def name(self) -> str:
        return "rules"

    @property
    def judges_contradictions(self) -> bool:
        return False  # reconcile's slot rules already judge what rules can

    def extract(self, messages: Sequence[Message], *, session_id: str | None, locale: str) -> Extraction:
        return extract(messages, session_id=session_id, locale=locale)

    def obsolete(self, new_fact: str, existing: Sequence[tuple[str, str]], *, locale: str) -> list[str]:
        return []
