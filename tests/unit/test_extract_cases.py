"""The file a call is about (``extraction.rules.cases``): a note saying where a file stands without
naming it gets the file the call named, and stays apart from the file's opening.

Sentences are written for these tests (general call-center French), not taken from a benchmark."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from carnet.domain.extraction.model import Extraction
from carnet.domain.extraction.rules import cases, extract
from carnet.domain.extraction.rules.smalltalk import carries_information
from carnet.domain.intake import Message

AT = datetime(2025, 5, 6, 14, 0, tzinfo=UTC)


def _call(*turns: tuple[str, str]) -> Extraction:
    messages = [Message(role, text, AT + timedelta(seconds=20 * n)) for n, (role, text) in enumerate(turns)]
    return extract(messages, session_id="call-1", locale="fr")


@pytest.mark.parametrize(
    ("sentence", "before", "file"),
    [
        pytest.param("Je vous appelle pour le sinistre SIN-2031-0042.", None, "SIN-2031-0042", id="a-reference"),
        pytest.param("SIN-2031-0042.", "Bonjour, Martine Roux, dossier...", "SIN-2031-0042", id="cut-sentence"),
        pytest.param("Oui, 075-2031-00841.", "Vous avez un numéro de dossier ?", "075-2031-00841", id="an-answer"),
        pytest.param("Mon numéro client, c'est CLI-55120.", None, None, id="a-member-number"),
        pytest.param("Au sujet de votre dossier dégât des eaux.", None, "dégât des eaux", id="a-kind"),
        pytest.param("La grêle a abîmé le toit.", None, None, id="a-kind-without-a-file"),
        pytest.param("Le dossier vol et le dossier grêle sont ouverts.", None, None, id="two-kinds"),
        pytest.param("Le dossier de <PERSON_1> est ouvert.", None, None, id="a-placeholder-is-no-file"),
    ],
)
def test_the_file_a_sentence_names(sentence: str, before: str | None, file: str | None) -> None:
    assert cases.named(sentence, before) == file


def test_a_status_note_gets_the_call_s_file_once() -> None:
    facts = _call(
        ("user", "Bonjour, Martine Roux, dossier... SIN-2031-0042. L'expert, il passe quand ?"),
        ("advisor", "J'ai un rendez-vous le 3 juillet à 9h avec le cabinet d'expertise. Le dossier reste en attente."),
    ).facts
    expert = [f.text for f in facts if "rendez-vous" in f.text]
    assert len(expert) == 1
    assert expert[0].count("(dossier SIN-2031-0042)") == 1


def test_a_file_named_by_kind_labels_what_follows_and_a_note_with_its_own_reference_keeps_it() -> None:
    texts = [f.text for f in _call(
        ("advisor", "Je vous appelle au sujet de votre dossier grêle."),
        ("advisor", "L'expert a chiffré la réparation à 2 640 euros. Le dossier est clos."),
        ("advisor", "Le dossier SIN-2031-0077 est clos aussi."),
    ).facts]  # fmt: skip
    assert any("2 640 euros" in t and "(dossier grêle)" in t for t in texts), texts
    assert not any("SIN-2031-0077" in t and "(dossier" in t for t in texts), texts


def test_a_status_said_with_the_opening_is_a_record_of_its_own() -> None:
    facts = _call(("advisor", "Je déclare le sinistre SIN-2031-0042, grêle sur la voiture. "
                              "Un expert la verra le 22 juillet, au garage.")).facts  # fmt: skip
    assert len(facts) == 2
    assert "grêle" in facts[0].text
    assert facts[1].text.endswith("(dossier SIN-2031-0042).")


def test_the_summary_of_the_call_is_written_without_the_labels() -> None:
    extraction = _call(
        ("user", "Bonjour, c'est pour le dossier SIN-2031-0042."),
        ("advisor", "Je vous confirme : un expert passera le 22 juillet, le dossier est en cours d'expertise."),
    )
    assert any("(dossier SIN-2031-0042)" in f.text for f in extraction.facts)
    assert extraction.episode is not None and "(dossier" not in extraction.episode


def test_a_payment_said_in_a_call_about_a_file_is_the_file_s() -> None:
    texts = [f.text for f in _call(
        ("advisor", "Je vous appelle pour votre dossier PRV-2031-0107."),
        ("advisor", "Le premier versement est parti hier : 960 euros, pour vingt jours."),
        ("advisor", "Votre cotisation reste de 58 euros par mois."),
    ).facts]  # fmt: skip
    assert any("960 euros" in t and t.endswith("(dossier PRV-2031-0107).") for t in texts), texts
    assert not any("58 euros" in t and "(dossier" in t for t in texts), texts  # a premium is no payment


@pytest.mark.parametrize(("text", "paid"), [
    ("Le conseiller verse 340 euros au membre.", True), ("Remboursé : 120 €.", True),
    ("Le premier versement est parti.", False),  # no amount
    ("Le membre paie 74 euros par mois.", False),  # a premium, not a payment received
])  # fmt: skip
def test_a_payment_is_a_payment_word_and_an_amount(text: str, paid: bool) -> None:
    assert cases.is_payment(text) is paid


def test_no_label_without_a_file_named_in_the_call() -> None:
    texts = [f.text for f in _call(("advisor", "Un expert passera le 22 juillet. Le dossier est clos.")).facts]
    assert texts and not any("(dossier" in t for t in texts)


@pytest.mark.parametrize(("sentence", "kept"), [("Le dossier est clos.", True), ("Votre dossier est recevable.", True),
                                                ("Je regarde votre dossier.", False)])  # fmt: skip
def test_a_file_s_status_is_information(sentence: str, kept: bool) -> None:
    assert carries_information(sentence, advisor=True) is kept


@given(st.text(max_size=200), st.sampled_from(["SIN-2031-0042", "grêle", None]))
def test_a_label_is_added_once_and_taken_off_by_without_file(text: str, label: str | None) -> None:
    labelled = cases.with_file(text, label)
    assert cases.with_file(labelled, label) == labelled
    if labelled != text:
        assert cases.without_file(labelled) == f"{text.rstrip('. ')}."
