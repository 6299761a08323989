"""A scripted ``Extractor`` for the queue's tests: each user message becomes one fact, as written;
it records what it was shown and can be told to fail."""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence

from carnet.domain.extraction.model import ExtractedFact, Extraction
from carnet.domain.intake import Message
from carnet.errors import ExtractionFailed


class ScriptedExtractor:
    name = "scripted"
    judges_contradictions = False

    def __init__(self, *, fail_rate: float = 0.0, fail_first: int = 0, seed: int = 7, episode: bool = False,
                 delay: float = 0.0) -> None:
        self.seen: list[str] = []
        self.contexts: list[list[str]] = []  # per call, the session's earlier messages it was shown
        self.calls = 0
        self._fail_rate, self._fail_first, self._episode, self._delay = fail_rate, fail_first, episode, delay
        self._random = random.Random(seed)
        self._lock = threading.Lock()

    def extract(self, messages: Sequence[Message], *, session_id: str | None, locale: str,
                context: Sequence[Message] = ()) -> Extraction:
        with self._lock:
            self.calls += 1
            self.seen.extend(m.content for m in messages)
            self.contexts.append([m.content for m in context])
            failing = self.calls <= self._fail_first or self._random.random() < self._fail_rate
        if self._delay:
            threading.Event().wait(self._delay)
        if failing:
            raise ExtractionFailed("http_500")
        facts = tuple(ExtractedFact(m.content, "note", 0.6, m.at) for m in messages if m.role == "user")
        summary = f"Appel : {len(facts)} information(s) notée(s)." if self._episode and facts else None
        return Extraction(facts, summary, tokens_in=10 * len(messages), tokens_out=5 * len(facts))

    def obsolete(self, new_fact: str, existing: Sequence[tuple[str, str]], *, locale: str) -> list[str]:
        return []
