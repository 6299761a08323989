"""The stemmer in use (snowballstemmer, through PyStemmer's C build when installed) gives the stems of
Snowball's own pure-Python code: the keyword index stores hashes of stems, so a stemmer that stemmed one
word otherwise would lose that word's matches in every store written before the change."""

from __future__ import annotations

import snowballstemmer
from hypothesis import given, settings
from hypothesis import strategies as st
from snowballstemmer.english_stemmer import EnglishStemmer
from snowballstemmer.french_stemmer import FrenchStemmer

from carnet.domain.text import tokenize

# Words of the trade and of French and English grammar (verbs in several tenses, plurals, elisions).
SAMPLE = tokenize(
    "Le membre habite désormais à Villeurbanne ; il a déménagé, résilié son contrat habitation et demandé "
    "la substitution de l'assurance emprunteur. Cotisations mensuelles prélevées, remboursements effectués, "
    "indemnités journalières versées, procurations signées, réclamations clôturées, prélèvements rejetés. "
    "Elle était joignable, nous appellerions, ils déménageront, qu'ils aient résilié, en attendant. "
    "The member moved; claims were closed, payments rejected, she is calling, they would have cancelled."
)
words = st.text(alphabet="abcdefghijklmnopqrstuvwxyzéèêàâçùûôîœë", min_size=1, max_size=14)


def test_the_stemmer_in_use_is_the_native_one() -> None:
    """PyStemmer is a dependency: the faster stemmer is the one that runs."""
    assert type(snowballstemmer.stemmer("french")).__module__ == "Stemmer"


def test_trade_words_stem_as_snowballs_own_code_stems_them() -> None:
    fr, en = snowballstemmer.stemmer("french"), snowballstemmer.stemmer("english")
    for word in SAMPLE:
        assert fr.stemWord(word) == FrenchStemmer().stemWord(word), word
        assert en.stemWord(word) == EnglishStemmer().stemWord(word), word


@settings(max_examples=300, deadline=None)
@given(words)
def test_any_word_stems_as_snowballs_own_code_stems_it(word: str) -> None:
    assert snowballstemmer.stemmer("french").stemWord(word) == FrenchStemmer().stemWord(word)
    assert snowballstemmer.stemmer("english").stemWord(word) == EnglishStemmer().stemWord(word)
