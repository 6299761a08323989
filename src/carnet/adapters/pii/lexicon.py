"""The words of a language, from the lemmatizer tables of the spaCy model already installed.

A name typed in lower case ("appel de nour bouazizi") is told from ordinary words ("appel de suivi")
by not being a word of the language. spaCy's French pipeline ships the tables of its lemmatizer
(``lemmatizer/lookups/lookups.bin``: some 216,000 inflected forms and 106,000 lemmas by part of
speech), which is that lexicon. It is read once, on first use (about 1.5 s), and never when the model
has no such tables: then no lower-case word is taken for a name this way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import structlog

log = structlog.get_logger(__name__)


class Lexicon:
    def __init__(self, model: str) -> None:
        self._model = model
        self._forms: Any = None
        self._lemmas: frozenset[str] = frozenset()
        self._loaded = False

    def is_word(self, word: str) -> bool:
        """``word`` (lower case) is an inflected form or a lemma of the language."""
        if not self._loaded:
            self._load()
        return word in self._lemmas or (self._forms is not None and word in self._forms)

    def _load(self) -> None:
        self._loaded = True
        path = _tables(self._model)
        if path is None:
            log.warning("lexicon_unavailable", model=self._model)
            return
        from spacy.lookups import Lookups

        lookups = Lookups().from_disk(path)
        if "lemma_lookup" in lookups.tables:
            self._forms = lookups.get_table("lemma_lookup")
        if "lemma_index" in lookups.tables:
            index = lookups.get_table("lemma_index")
            self._lemmas = frozenset(w for key in index for w in index[key])


def _tables(model: str) -> Path | None:
    """``<package>/<model>-<version>/lemmatizer/lookups`` of an installed model package."""
    import spacy.util

    try:
        root = Path(spacy.util.get_package_path(model))
    except (ImportError, ModuleNotFoundError, OSError):
        return None
    found = sorted(root.glob("*/lemmatizer/lookups"))
    return found[0] if found else None
