"""What an extractor returns: the statements worth remembering from a stretch of conversation, and
a short episode summary. Texts here are pseudonymised (placeholders such as ``<PERSON_1>``): the
extractor, LLM or rules, never sees the personal data itself."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from carnet.domain.records import Kind


@dataclass(frozen=True, slots=True)
class ExtractedFact:
    text: str  # one self-contained statement, in the conversation's language
    category: str | None = None  # e.g. "contrat", "sinistre", "preference", "adresse", "decision"
    importance: float = 0.5
    valid_from: datetime | None = None  # when it became true, if the conversation says
    kind: Kind = Kind.FACT


@dataclass(frozen=True, slots=True)
class Extraction:
    facts: tuple[ExtractedFact, ...]
    episode: str | None = None  # one or two sentences on what the session was about and what was decided
    tokens_in: int = 0
    tokens_out: int = 0
