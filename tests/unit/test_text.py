"""carnet.domain.text: normalisation, tokens, stems, overlap and the LLM token estimate."""

from __future__ import annotations

import pytest

from carnet.domain.text import (
    content_terms,
    content_tokens,
    detect_language,
    estimate_tokens,
    fold,
    fold_accents,
    is_stopword,
    jaccard,
    normalize,
    same_text,
    stem,
    tokenize,
)


def test_normalize_is_nfkc_casefolded_with_one_apostrophe_and_single_spaces() -> None:
    assert normalize("  L’Assurance\u00a0ÉTÉ  ﬁn ") == "l'assurance été fin"


def test_fold_removes_accents_and_ligatures() -> None:
    assert fold_accents("préférée cœur garçon") == "preferee coeur garcon"
    assert fold("Déménagé à Lyon") == "demenage a lyon"


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("l'assurance d'habitation qu'il a", ["l'", "assurance", "d'", "habitation", "qu'", "il", "a"]),
        ("J'habite, n'est-ce pas", ["j'", "habite", "n'", "est-ce", "pas"]),
        ("s'est installé, c'est", ["s'", "est", "installé", "c'", "est"]),
        ("après-midi, rez-de-chaussée, rendez-vous", ["après-midi", "rez-de-chaussée", "rendez-vous"]),
        ("habite-t-il", ["habite", "t", "il"]),
    ],
)
def test_tokenize_splits_elisions_and_keeps_hyphenated_words(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("600 €", ["600", "eur"]),
        ("600€", ["600", "eur"]),
        ("750euros", ["750", "eur"]),
        ("1 200 euros", ["1200", "eur"]),
        ("1.200 €", ["1200", "eur"]),
        ("2k€", ["2000", "eur"]),
        ("€600", ["eur", "600"]),
        ("0,50", ["0.5"]),
        ("Lyon 7e", ["lyon", "7e"]),
        ("Lyon 7ème", ["lyon", "7e"]),
        ("3e étage", ["3e", "étage"]),
        ("troisième étage", ["3e", "étage"]),
        ("1er janvier", ["01-01"]),
        ("69007 Lyon", ["69007", "lyon"]),
        ("deux enfants", ["2", "enfants"]),
        ("65 m²", ["65", "m2"]),
        ("20 000 km", ["20000", "km"]),
        ("14h30", ["14h30"]),
    ],
)
def test_numbers_and_units_are_canonical(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


def test_dates_have_one_form_whatever_the_spelling() -> None:
    assert tokenize("le 3 mars 2024") == tokenize("le 03/03/2024") == ["le", "03-03", "2024"]
    assert tokenize("on 5th of May") == ["on", "05-05"]


def test_codes_stay_whole() -> None:
    assert tokenize("06 39 98 12 34") == tokenize("+33 6 39 98 12 34") == ["0639981234"]
    assert tokenize("prenom.nom@example.fr") == ["prenom.nom@example.fr"]
    assert tokenize("FR76 3000 6000 0112 3456 7890 189") == ["fr7630006000011234567890189"]


def test_stopwords_depend_on_the_language() -> None:
    assert is_stopword("les", "fr") and is_stopword("the", "en") and is_stopword("the", "fr")
    assert is_stopword("car", "fr") and not is_stopword("car", "en")  # "because" vs a vehicle


def test_language_detection_defaults_to_french() -> None:
    assert detect_language(tokenize("Budget max 600 euros")) == "fr"
    assert detect_language(tokenize("Il habite à Lyon avec sa femme")) == "fr"
    assert detect_language(tokenize("He lives in Leeds with his partner")) == "en"


def test_stems_meet_across_inflections_and_accents() -> None:
    assert stem("voitures", "fr") == stem("voiture", "fr")
    assert stem("déménagé", "fr") == stem("déménagement", "fr") == "demenag"
    assert stem("children", "en") != stem("child", "en")  # Snowball is light: irregular plurals stay
    assert stem("2024", "fr") == "2024"


def test_content_terms_drop_function_words_and_keep_repeats() -> None:
    assert content_terms("Le client habite à Lyon, à Lyon 7e") == ["habit", "lyon", "lyon", "7e"]
    assert content_tokens("Budget max 600 euros") == {"budget", "max", "600", "eur"}


def test_uncached_stemming_gives_the_same_tokens() -> None:
    text = "Préfère être appelé l'après-midi"
    assert content_tokens(text, cache=False) == content_tokens(text)


def test_jaccard_over_content_tokens() -> None:
    assert jaccard("Budget max 600 euros", "budget maximum : 600 €") == pytest.approx(0.6)
    assert jaccard("Habite à Lyon", "habite à Lyon") == 1.0
    assert jaccard("Habite à Lyon", "A deux enfants") == 0.0
    assert jaccard("le la les", "de du des") == 0.0  # no content at all is not sameness
    assert jaccard(frozenset({"a", "b"}), frozenset({"b", "c"})) == pytest.approx(1 / 3)


def test_same_text_ignores_case_accents_spaces_and_final_punctuation() -> None:
    assert same_text("Préfère être appelé le matin.", "prefere  etre appele le matin")
    assert not same_text("Budget max 600 €", "Budget max 750 €")


def test_estimate_tokens_errs_high() -> None:
    assert estimate_tokens("") == 0
    short = "Préfère être appelé le matin"
    assert estimate_tokens(short) >= len(short) / 4
    assert estimate_tokens("IBAN FR76 3000 6000 0112 3456 7890 189") >= 10  # codes are token-hungry
    assert estimate_tokens(short * 10) > estimate_tokens(short)
