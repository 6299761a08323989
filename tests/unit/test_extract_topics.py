"""One record per topic in a call (``domain/extraction/rules/topics``): records of one call that carry the
same reference or amount are folded into one; names, dates and a value said anew are no shared topic."""

from __future__ import annotations

from datetime import UTC, datetime

from carnet.adapters.extractors.rules import RuleExtractor
from carnet.domain.extraction.model import ExtractedFact
from carnet.domain.extraction.rules import topics, turns
from carnet.domain.intake import Message

AT = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)


def _texts(*texts: str) -> list[str]:
    return [f.text for f in topics.fold([ExtractedFact(t) for t in texts])]


def test_records_sharing_a_reference_or_an_amount_are_one_record() -> None:
    assert _texts("Le prélèvement se fera sur <IBAN_1>.", "Le membre habite au <ADDRESS_1>.",
                  "Le conseiller relit : <IBAN_1>.") == [
        "Le prélèvement se fera sur <IBAN_1> ; le conseiller relit : <IBAN_1>.", "Le membre habite au <ADDRESS_1>."]
    assert _texts("La franchise est de 150 euros.", "150 euros, c'est ça.") == [
        "La franchise est de 150 euros ; 150 euros, c'est ça."]
    assert _texts("Le contrat 2025-07741 couvre la maison.", "Le contrat 2025-07741 inclut la garantie vol.") == [
        "Le contrat 2025-07741 couvre la maison ; le contrat 2025-07741 inclut la garantie vol."]


def test_a_files_status_stays_a_record_of_its_own() -> None:
    said = ("Le dossier 2025-07741 attend le devis.", "Le dossier 2025-07741 est ouvert.")  # the second: a status
    assert _texts(*said) == list(said)


def test_names_dates_short_numbers_and_new_values_are_no_shared_topic() -> None:
    kept = ("<PERSON_1> a un livret A.", "<PERSON_1> déménage le 3 mars 2026.", "Il a signé le 3 mars 2026.",
            "Rappeler après 17h30.", "Le bureau ferme à 17h30.",
            "La cotisation est de 32,50 euros.", "La cotisation passe à 35 euros.")
    assert _texts(*kept) == list(kept)


def test_a_record_stops_growing_at_the_turns_limit() -> None:
    long = "Le prélèvement se fera sur <IBAN_1> " + "x" * (turns.MAX_CHARS - 40) + "."
    assert len(_texts(long, "Le conseiller relit : <IBAN_1>.")) == 2


def test_the_rule_extractor_folds_a_value_read_back_in_another_turn() -> None:
    call = [Message("user", "Je veux que le prélèvement se fasse sur mon compte <IBAN_1>.", AT),
            Message("advisor", "Je relis : <IBAN_1>.", AT),
            Message("user", "Oui. Autre chose : j'ai déménagé au <ADDRESS_1>.", AT)]
    facts = RuleExtractor().extract(call, session_id=None, locale="fr").facts
    assert [f.text for f in facts] == [
        "Le membre veut que le prélèvement se fasse sur son compte <IBAN_1> ; le conseiller relit : <IBAN_1>.",
        "Le membre a déménagé au <ADDRESS_1>."]
