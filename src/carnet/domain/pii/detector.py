"""The detector without a model: every pattern recognizer, the given-name rules, and the tenant's own
identifier formats, settled into non-overlapping spans. It is the whole detector on the read path
(a query is pseudonymised in well under a millisecond) and half of it on the write path, beside NER.

It reads the normalised view of a text (``normalise``: NFKC, no zero-width characters, one kind of
space and dash, spelled-out numbers as digits) and answers spans of the text as written."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from carnet.domain.pii.names import NAME_RECOGNIZERS
from carnet.domain.pii.normalise import Normalised, views
from carnet.domain.pii.patterns import ANSWERED_BIRTHDATE, BIRTH_QUESTION, RECOGNIZERS, Recognizer
from carnet.domain.pii.spans import Span, settle

DEFAULT_RECOGNIZERS: tuple[Recognizer, ...] = (*RECOGNIZERS, *NAME_RECOGNIZERS)


@dataclass(frozen=True, slots=True)
class PatternDetector:
    extra: Sequence[Recognizer] = ()
    threshold: float = 0.5

    def recognizers(self) -> tuple[Recognizer, ...]:
        return (*DEFAULT_RECOGNIZERS, *self.extra)

    def detect(self, text: str) -> list[Span]:
        recognizers = self.recognizers()
        return settle([s for view in views(text) for s in find_all(recognizers, view)], threshold=self.threshold)

    def detect_batch(self, texts: Sequence[str]) -> list[list[Span]]:
        return [self.detect(t) for t in texts]

    def is_word(self, word: str) -> bool:
        return False  # no lexicon: every known name is looked for everywhere


def view_spans(recognizers: Sequence[Recognizer], view: Normalised) -> list[Span]:
    """Every recognizer's spans on the normalised view (positions in ``view.text``)."""
    return [s for r in recognizers for s in r.find(view.text)]


def find_all(recognizers: Sequence[Recognizer], view: Normalised) -> list[Span]:
    """Every recognizer's spans on the normalised view, as spans of the original text."""
    return [view.back(s) for s in view_spans(recognizers, view)]


def answered_birthdates(question: str, answer: str) -> list[Span]:
    """The dates of ``answer`` when ``question`` (the turn before it in a call) asks for a date of birth."""
    if not BIRTH_QUESTION.search(question):
        return []
    return [s for view in views(answer) for s in find_all((ANSWERED_BIRTHDATE,), view)]
