"""Values dictated on the phone and typed as they were said (measured on the labelled calls of
../shared/bench with ``carnet bench pii --notes``; these sentences and values are written for this test):
groups with the pauses between them, words spelled letter by letter, a date of birth answered alone."""

from __future__ import annotations

import pytest

from carnet.bench.pii_survival import MemoryMaps
from carnet.domain.pii.detector import PatternDetector, answered_birthdates
from carnet.domain.records import Scope
from carnet.services.pii import Pii, for_extraction

DETECT = PatternDetector()


def found(text: str) -> list[tuple[str, str]]:
    return [(s.kind, s.text(text)) for s in DETECT.detect(text)]


@pytest.mark.parametrize(("text", "kind", "value"), [
    ("Alors : FR76, 3000, 6000, 0112, 3456, 7890, 189.", "IBAN", "FR76, 3000, 6000, 0112, 3456, 7890, 189"),
    ("Je lis : FR76… 3000… 6000… 0112… 3456… 7890… 189.", "IBAN", "FR76… 3000… 6000… 0112… 3456… 7890… 189"),
    ("Je lis : FR76... 3000... 6000... 0112... 3456... 7890... 189", "IBAN",
     "FR76... 3000... 6000... 0112... 3456... 7890... 189"),
    ("Oui : zéro six, douze, trente-quatre, cinquante-six, soixante-dix-huit.", "PHONE",
     "zéro six, douze, trente-quatre, cinquante-six, soixante-dix-huit"),
    ("C'est le zéro six… douze… trente-quatre… cinquante-six… soixante-dix-huit", "PHONE",
     "zéro six… douze… trente-quatre… cinquante-six… soixante-dix-huit"),
    ("sécu 2 80 05 69 123 456, clé 23", "NIR", "2 80 05 69 123 456, clé 23"),
    ("C'est Julien Morel : M-O-R-E-L, sans accent.", "PERSON", "M-O-R-E-L"),
    ("Le nom, c'est A, U, B, R, Y.", "PERSON", "A, U, B, R, Y"),
])  # fmt: skip
def test_a_dictated_value_is_found_whole(text: str, kind: str, value: str) -> None:
    assert (kind, value) in found(text)


def test_pauses_do_not_join_a_number_to_the_next_one() -> None:
    """The pauses are a reading apart: a phone number followed by another number in a sentence is still the
    phone number, and a decimal comma is no pause."""
    assert found("joignable au 06 12 34 56 78, 2 fois par jour") == [("PHONE", "06 12 34 56 78")]
    assert found("Cotisation de 212,40 € pour 3, 4 ou 5 personnes, deux, trois enfants.") == []
    assert found("Options A, B et C du contrat, dossier SUB-2025-1187.") == []


def test_a_date_of_birth_answered_alone_is_one_when_the_turn_before_asks_for_it() -> None:
    assert [s.kind for s in answered_birthdates("Votre date de naissance ?", "22/09/1981.")] == ["BIRTHDATE"]
    assert [s.kind for s in answered_birthdates("Elle est née quand ?", "Quatorze mars soixante-douze.")] == [
        "BIRTHDATE"]
    assert answered_birthdates("Le sinistre date de quand ?", "22/09/2023.") == []


def test_a_call_keeps_no_date_of_birth_answered_alone() -> None:
    pii = Pii(detector=DETECT, query_detector=DETECT, maps=MemoryMaps())
    seen = for_extraction(pii, Scope("t", "s"), ["Pouvez-vous me confirmer votre date de naissance ?", "Le 22/09/1981.",
                                                 "Et la date du sinistre ?", "Le 03/02/2025."])
    assert seen.pseudo[1] == "Le <BIRTHDATE_1>." and seen.pseudo[3] == "Le 03/02/2025."


@pytest.mark.parametrize(("said", "back"), [
    ("zéro six, soixante et onze, quarante-deux, dix-huit, quatre-vingt-treize", "06 71 42 18 93"),
    ("zéro six douze trente-quatre cinquante-six soixante-dix-huit", "06 12 34 56 78"),
    ("06 71 42 18 93", "06 71 42 18 93"),  # written in digits: as written
    ("+33 6 71 42 18 93", "+33 6 71 42 18 93"),
])
def test_a_phone_number_dictated_in_words_comes_back_in_digits(said: str, back: str) -> None:
    pii = Pii(detector=DETECT, query_detector=DETECT, maps=MemoryMaps())
    seen = for_extraction(pii, Scope("t", "s"), [f"Mon portable, c'est le {said}."])
    assert seen.pseudo == ["Mon portable, c'est le <PHONE_1>."]
    assert seen.back == {"<PHONE_1>": back}
    assert seen.found == (("PHONE", said),)  # the map learns the value as it was said
