"""The ``Extractor`` port on Mistral served by vLLM (``CARNET_EXTRACTOR=mistral``).

Three tasks, each one structured chat completion (``carnet.adapters.extractors.mistral_chat``) with its prompt
(``carnet.domain.extraction.prompts``) and its answer model (``carnet.domain.extraction.schemas``), whose
generated JSON schema is the request's ``response_format`` and which validates the answer:

- ``extract``: the facts worth remembering and a summary (kept as the episode when there is a
  session). Long sessions are summarized, then forgotten: when the transcript exceeds
  ``transcript_chars``, its older part is cut into chunks that are summarized in turn (each summary
  folding in the previous one), and the facts are extracted from that summary plus the recent tail,
  kept verbatim. What the summaries leave out is not extracted: the summary prompt asks to keep every
  durable fact, and the budget is large enough that most calls never get there;
- ``obsolete``: which known facts a new one makes obsolete. The model sees the known facts numbered
  1..n and answers with numbers; numbers outside that range are counted (``stats.foreign_ids``) and
  ignored, so only ids the caller gave can come back;
- the summary of older chunks, above.

An answer that is not JSON, or not in schema, fails the extraction at once with
``ExtractionFailed("malformed_json" | "schema_violation")``: never a partial or an empty result in its
place (mem0 dropped facts silently on such answers). It is not asked again: at temperature 0 with
guided decoding the same prompt gives the same answer, so a bad answer means a server without a
structured-output backend or a cut-off answer, which the intake's retries with backoff and then its
dead letter make visible. Facts the model flagged ``worth_remembering: false`` are counted
(``stats.set_aside``), not stored; so are those it said are about someone other than the member
(``about``, ``stats.not_member``).

Logs carry counts and reason codes, never a message, a fact or an answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

import structlog
from pydantic import BaseModel

from carnet.adapters.extractors.answers import AnswerRejected, facts, parse
from carnet.adapters.extractors.mistral_chat import CallRetry, LlmStats, MistralChat, Observe
from carnet.domain.extraction import transcript
from carnet.domain.extraction.model import ExtractedFact, Extraction
from carnet.domain.extraction.prompts import Prompt, facts_prompt, obsolete_prompt, summary_prompt
from carnet.domain.extraction.schemas import (
    SCHEMA_NAMES,
    FactsAnswer,
    ObsoleteAnswer,
    SummaryAnswer,
    answer_schema,
)
from carnet.domain.intake import Message
from carnet.domain.pii.pseudonyms import PLACEHOLDER
from carnet.errors import ExtractionFailed

log = structlog.get_logger(__name__)

_M = TypeVar("_M", bound=BaseModel)


class MistralExtractor:
    def __init__(self, server_url: str, api_key: str | None, model: str, *, ca_cert: Path | None = None,
                 client_cert: tuple[Path, Path] | None = None, timeout: float = 30.0, max_tokens: int = 1024,
                 temperature: float = 0.0, max_retries: int = 2, backoff: float = 0.5,
                 transcript_chars: int = 12_000, observe: Observe | None = None) -> None:
        """``server_url``: vLLM's base URL without ``/v1``; ``model``: its ``--served-model-name``;
        ``timeout``: seconds per attempt; ``max_retries``: attempts after the first on transient
        failures, waiting ``backoff`` seconds then twice as long each time (plus jitter), or what a
        429's ``Retry-After`` asks when that is at most 10 s; ``transcript_chars``: the transcript size above
        which older messages are summarized first; ``observe(operation, seconds)``: called once per
        call ("facts", "summary", "obsolete"), all its attempts and waits included, failed ones too."""
        self.stats = LlmStats()
        self._chat = MistralChat(server_url, api_key, model, ca_cert=ca_cert, client_cert=client_cert, timeout=timeout,
                                 max_tokens=max_tokens, temperature=temperature, stats=self.stats, observe=observe,
                                 retry=CallRetry(max_retries=max_retries, backoff=backoff))
        self._budget = transcript_chars

    @property
    def name(self) -> str:
        return "mistral"

    @property
    def judges_contradictions(self) -> bool:
        return True

    def extract(self, messages: Sequence[Message], *, session_id: str | None, locale: str,
                context: Sequence[Message] = ()) -> Extraction:
        """``context`` (the session's earlier messages, already extracted) is shown verbatim, its most
        recent lines within half the budget, as the beginning of the exchange."""
        lines = transcript.lines(messages, locale)
        if not lines:
            return Extraction(facts=())
        parts = transcript.split(lines, self._budget)
        spent = [0, 0]
        earlier: str | None = transcript.tail(transcript.lines(context, locale), self._budget // 2) or None
        for chunk in parts.older:
            done = self._ask("summary", summary_prompt(chunk, locale=locale, earlier=earlier), SummaryAnswer, spent)
            earlier = done.summary.strip() or earlier
        answer = self._ask("facts", facts_prompt(parts.recent, locale=locale, earlier=earlier), FactsAnswer, spent)
        kept, set_aside, not_member = facts(answer)
        self._check_placeholders(kept, [m.content for m in messages])
        self.stats.add(set_aside=set_aside, not_member=not_member)
        summary = answer.summary.strip()
        log.info("llm_extracted", facts=len(kept), set_aside=set_aside, not_member=not_member,
                 summarized_chunks=len(parts.older), tokens_in=spent[0], tokens_out=spent[1])
        return Extraction(facts=tuple(kept), episode=summary if session_id is not None and summary else None,
                          tokens_in=spent[0], tokens_out=spent[1])

    def obsolete(self, new_fact: str, existing: Sequence[tuple[str, str]], *, locale: str) -> list[str]:
        if not existing:
            return []
        prompt = obsolete_prompt(new_fact, [text for _, text in existing], locale=locale)
        answer = self._ask("obsolete", prompt, ObsoleteAnswer, [0, 0])
        chosen: list[str] = []
        foreign = 0
        for key in answer.obsolete_ids:
            n = int(key) if key.strip().isdecimal() else 0
            if 1 <= n <= len(existing):
                chosen.append(existing[n - 1][0])
            else:
                foreign += 1
        if foreign:
            self.stats.add(foreign_ids=foreign)
            log.warning("llm_obsolete_foreign_ids", count=foreign)
        return list(dict.fromkeys(chosen))

    def close(self) -> None:
        self._chat.close()

    def _ask(self, task: str, prompt: Prompt, model: type[_M], spent: list[int]) -> _M:
        """One call for ``task``: the schema sent is generated from ``model``, and the answer is validated
        with that same model; tokens added to ``spent``."""
        done = self._chat.complete(task, prompt, schema_name=SCHEMA_NAMES[task], schema=answer_schema(model))
        spent[0] += done.tokens_in
        spent[1] += done.tokens_out
        try:
            return parse(done.content, model)
        except AnswerRejected as exc:
            self.stats.failed(exc.reason)
            log.warning("llm_answer_rejected", operation=task, reason=exc.reason, chars=len(done.content))
            raise ExtractionFailed(exc.reason) from None

    def _check_placeholders(self, kept: Sequence[ExtractedFact], inputs: Sequence[str]) -> None:
        """Count placeholders in the facts that no message had: the model made them up (they are
        kept as written, and the worker's restore leaves them as placeholders)."""
        given = {m.group(0) for text in inputs for m in PLACEHOLDER.finditer(text)}
        made_up = {m.group(0) for f in kept for m in PLACEHOLDER.finditer(f.text)} - given
        if made_up:
            self.stats.add(made_up_placeholders=len(made_up))
            log.warning("llm_placeholders_made_up", count=len(made_up))
