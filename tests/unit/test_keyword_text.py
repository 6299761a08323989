"""What a note is about (``domain/reconcile/topics``): the words the keyword index adds, the kinds of
file a note names, and a call's summary restating a decision. The sentences are written for these
tests (none comes from a benchmark file)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from carnet.domain.reconcile.summaries import restates
from carnet.domain.reconcile.topic_rules import TOPICS
from carnet.domain.reconcile.topics import CASE_WORDS, case_kinds, file_kinds, keyword_text, names_file_of
from carnet.domain.text import fold

HAIL_OPENED = "Le conseiller déclare le sinistre SIN-2031-0001, grêle sur la voiture garée devant la maison."


def test_the_keyword_text_names_what_a_note_is_about_and_adds_no_value() -> None:
    note = "À compter du 1er juillet, <ADDRESS_1>."  # a move, told without the word "adresse"
    assert keyword_text(note) == f"{note} adresse domicile address home"
    assert keyword_text("Dossier SIN-2025-000123 en attente d'expertise.").endswith(" dossier file")
    assert keyword_text("Il aime le jardinage.") == "Il aime le jardinage."
    assert "revenus income" in keyword_text("Un CDI de cariste, 1 780 euros net.")


@given(st.text(max_size=200))
def test_the_keyword_text_only_adds_words_of_the_table(text: str) -> None:
    table = {w for t in TOPICS for words in t.words for w in words.split()} | set(CASE_WORDS.split())
    out = keyword_text(text)
    assert out.startswith(text)
    assert set(out[len(text):].split()) <= table


def test_a_kind_is_read_only_in_a_note_about_a_file() -> None:
    assert case_kinds(fold("La grêle a abîmé le toit.")) == frozenset()
    assert case_kinds(fold("Le dossier grêle est clos.")) == {"grêle"}
    assert file_kinds("Le dossier grêle est clos.") == {"grêle"}
    assert file_kinds("Le dossier SIN-2031-0001 (grêle) est clos.") == frozenset()  # it names its reference
    assert names_file_of("Dossier grêle SIN-2031-0001 ouvert.", frozenset({"grêle"}))
    assert not names_file_of(HAIL_OPENED.replace("SIN-2031-0001", "le sien"), frozenset({"grêle"}))


@pytest.mark.parametrize(
    ("summary", "decision", "restated"),
    [
        ("Appel du 3 mai 2025 : cotisation ; le conseiller passe la cotisation à 61 euros par mois.",
         "Le conseiller passe la cotisation à 61 euros par mois.", True),
        ("Appel du 3 mai 2025 : l'expert passera le 22 juillet.",
         "L'expert passera le 22 juillet (dossier SIN-2031-0001).", True),
        ("Appel du 3 mai 2025 : le conseiller passe la cotisation à 61…",
         "Le conseiller passe la cotisation à 61 euros par mois.", False),
        ("Appel du 3 mai 2025 : oui ; le conseiller envoie le contrat.", "Oui.", False),
    ],
)
def test_a_summary_restates_a_decision_it_holds_whole(summary: str, decision: str, restated: bool) -> None:
    assert restates(summary, decision) is restated
