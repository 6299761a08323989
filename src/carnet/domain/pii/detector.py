"""The detector without a model: every pattern recognizer, the given-name rules, and the tenant's own
identifier formats, settled into non-overlapping spans. It is the whole detector on the read path
(a query is pseudonymised in well under a millisecond) and half of it on the write path, beside NER."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from carnet.domain.pii.names import NAME_RECOGNIZERS
from carnet.domain.pii.patterns import RECOGNIZERS, Recognizer
from carnet.domain.pii.spans import Span, settle

DEFAULT_RECOGNIZERS: tuple[Recognizer, ...] = (*RECOGNIZERS, *NAME_RECOGNIZERS)


@dataclass(frozen=True, slots=True)
class PatternDetector:
    extra: Sequence[Recognizer] = ()
    threshold: float = 0.5

    def recognizers(self) -> tuple[Recognizer, ...]:
        return (*DEFAULT_RECOGNIZERS, *self.extra)

    def detect(self, text: str) -> list[Span]:
        return settle([s for r in self.recognizers() for s in r.find(text)], threshold=self.threshold)

    def detect_batch(self, texts: Sequence[str]) -> list[list[Span]]:
        return [self.detect(t) for t in texts]
