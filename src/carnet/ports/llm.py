"""What a language model (or the rules standing in for one) is asked: extraction and contradiction."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from carnet.domain.extraction.model import Extraction
from carnet.domain.intake import Message


class Extractor(Protocol):
    """Turns pseudonymised messages into facts worth remembering (rules, or an LLM)."""

    @property
    def name(self) -> str: ...

    @property
    def judges_contradictions(self) -> bool:
        """Whether ``obsolete`` can say more than reconcile's rules (an LLM can; rules cannot)."""
        ...

    def extract(self, messages: Sequence[Message], *, session_id: str | None, locale: str,
                context: Sequence[Message] = ()) -> Extraction:
        """Facts worth keeping (small talk filtered out) and, for a session, an episode summary.
        ``context``: the session's earlier messages, already extracted: read before ``messages`` (the
        question an answer replies to, who is calling), never a source of facts of their own.
        Raises ``ExtractionFailed`` (retryable) when the backend fails or answers out of schema."""
        ...

    def obsolete(self, new_fact: str, existing: Sequence[tuple[str, str]], *, locale: str) -> list[str]:
        """The ids among ``existing`` (id, text) that ``new_fact`` makes obsolete (contradiction
        judgment). Rule-based extractors return [] and leave it to reconcile's rules."""
        ...


class ContradictionJudge(Protocol):
    """What the LLM's contradiction judgment needs of an extractor (``Extractor.obsolete``): explicit
    writes get it too when an LLM is configured (:mod:`carnet.services.memories.judge`)."""

    def obsolete(self, new_fact: str, existing: Sequence[tuple[str, str]], *, locale: str) -> list[str]: ...
