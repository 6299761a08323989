"""The words of a language, from the lemmatizer tables of the spaCy model already installed.

A name typed in lower case ("appel de nour bouazizi") is told from ordinary words ("appel de suivi")
by not being a word of the language. spaCy's French pipeline ships the tables of its lemmatizer
(``lemmatizer/lookups/lookups.bin``: some 216,000 inflected forms and 106,000 lemmas by part of
speech), which is that lexicon. It is read once, on first use (about a second), kept as a sorted
array of string hashes (a few MB), and never when the model has no such tables: then no lower-case
word is taken for a name this way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import structlog
from spacy.strings import get_string_id

log = structlog.get_logger(__name__)


class Lexicon:
    def __init__(self, model: str) -> None:
        self._model = model
        self._hashes: np.ndarray[Any, np.dtype[np.uint64]] | None = None

    def is_word(self, word: str) -> bool:
        """``word`` (lower case) is an inflected form or a lemma of the language."""
        if self._hashes is None:
            self._hashes = self._load()
        if not len(self._hashes):
            return False
        h = np.uint64(get_string_id(word))
        at = int(np.searchsorted(self._hashes, h))
        return at < len(self._hashes) and bool(self._hashes[at] == h)

    def _load(self) -> np.ndarray[Any, np.dtype[np.uint64]]:
        """The forms and lemmas as a sorted array of spaCy's 64-bit string hashes (some 2.5 MB, where
        the tables as loaded take a hundred): a lookup is a binary search."""
        path = _tables(self._model)
        if path is None:
            log.warning("lexicon_unavailable", model=self._model)
            return np.zeros(0, dtype=np.uint64)
        from spacy.lookups import Lookups

        lookups = Lookups().from_disk(path)
        hashes: set[int] = set()
        if "lemma_lookup" in lookups.tables:
            table = lookups.get_table("lemma_lookup")
            hashes.update(table.keys())
            hashes.update(get_string_id(lemma) for lemmas in table.values() for lemma in lemmas)
        if "lemma_index" in lookups.tables:
            index = lookups.get_table("lemma_index")
            hashes.update(get_string_id(w) for key in index for w in index[key])
        return np.unique(np.fromiter(hashes, dtype=np.uint64, count=len(hashes)))


def _tables(model: str) -> Path | None:
    """``<package>/<model>-<version>/lemmatizer/lookups`` of an installed model package."""
    import spacy.util

    try:
        root = Path(spacy.util.get_package_path(model))
    except (ImportError, ModuleNotFoundError, OSError):
        return None
    found = sorted(root.glob("*/lemmatizer/lookups"))
    return found[0] if found else None
