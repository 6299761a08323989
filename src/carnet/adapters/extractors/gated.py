"""An LLM extractor behind the learned turn filter: the cheap filter decides which calls need the LLM.

The turn filter (``domain.extraction.turn_model``, shipped as ``calibration/turn-filter.json``) gives each
turn of a dialogue its probability of carrying a fact about the member. A call in which it keeps no turn
(every probability under ``keep_at``: greetings, identity checks, procedure talk) is not sent: its
extraction is empty, no fact and no episode, and it costs no LLM call. A call the filter cannot judge (one
side only: dictated notes, a member's messages alone) is sent whole, as is every call the filter keeps a
turn of: the LLM reads the whole call, the filter only gates it. Each decision is counted in the
extractor's ``LlmStats`` (``extractions_sent`` / ``extractions_skipped``, exported as
``carnet_llm_extractions{decision}``). Contradiction judgments (``obsolete``) always go to the LLM.
"""

from __future__ import annotations

from collections.abc import Sequence

from carnet.adapters.extractors.mistral_chat import LlmStats
from carnet.domain.extraction.model import Extraction
from carnet.domain.extraction.turn_model import TurnModel
from carnet.domain.intake import Message
from carnet.ports.llm import Extractor


def needs_llm(turns: TurnModel, messages: Sequence[Message], context: Sequence[Message] = ()) -> bool:
    """Whether the call goes to the LLM: a turn the filter keeps (weighed after the session's earlier
    messages, ``context``), or a call it cannot judge."""
    kept = turns.keep([*context, *messages], ongoing=bool(context))
    return kept is None or any(kept[len(context):])


class GatedExtractor:
    """``Extractor`` port: ``inner`` (the LLM) on the calls ``turns`` says need it; decisions counted in ``stats``."""

    def __init__(self, inner: Extractor, turns: TurnModel, *, stats: LlmStats) -> None:
        self._inner, self._turns, self.stats = inner, turns, stats

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def judges_contradictions(self) -> bool:
        return self._inner.judges_contradictions

    def extract(self, messages: Sequence[Message], *, session_id: str | None, locale: str,
                context: Sequence[Message] = ()) -> Extraction:
        if not needs_llm(self._turns, messages, context):
            self.stats.add(extractions_skipped=1)
            return Extraction(facts=())
        self.stats.add(extractions_sent=1)
        return self._inner.extract(messages, session_id=session_id, locale=locale, context=context)

    def obsolete(self, new_fact: str, existing: Sequence[tuple[str, str]], *, locale: str) -> list[str]:
        return self._inner.obsolete(new_fact, existing, locale=locale)

    def close(self) -> None:
        close = getattr(self._inner, "close", None)
        if close is not None:
            close()
