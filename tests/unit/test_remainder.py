"""What a closed note of several parts still says (``reconcile.remainder``). Sentences written for
this test, not taken from a benchmark file."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from carnet.domain.reconcile.remainder import parts, remainder

PREMIUM_AND_OPTION = ("La cotisation habitation est de 32 euros par mois ; "
                      "le conseiller ajoute la garantie piscine au contrat.")


def test_the_parts_a_newer_note_leaves_true_are_kept() -> None:
    new = "La cotisation habitation passe à 35 euros par mois."
    assert remainder(new, PREMIUM_AND_OPTION) == "le conseiller ajoute la garantie piscine au contrat."


def test_a_value_said_alone_takes_the_part_before_it_along() -> None:
    new = "Son nouveau portable est le 06 12 34 56 78."
    assert remainder(new, "Le membre donne son portable ; 06 98 76 54 32.") is None
    kept = remainder(new, "Le membre a un chien ; son portable est le 06 98 76 54 32 ; il préfère les appels le matin.")
    assert kept == "Le membre a un chien ; il préfère les appels le matin."


def test_a_part_pointing_back_takes_the_part_it_points_at_along() -> None:
    new = "Le conseiller modifie le virement permanent : 90 euros le 2 de chaque mois."
    old = "Le membre paie la cantine de sa nièce ; il le fait en espèces, et il voudrait un virement automatique."
    assert remainder(new, old) is None
    old = "Le membre a une nièce à Nancy ; il paie sa cantine en espèces, et il voudrait un virement automatique."
    assert remainder(new, old) == "Le membre a une nièce à Nancy"


def test_a_file_moved_on_keeps_the_part_that_opened_it() -> None:
    new = "Dossier PRV-2031-0440 : premier versement de 900 euros, versé le 4 mars."
    old = "Le conseiller ouvre le dossier PRV-2031-0440 ; il faudra le certificat médical du chirurgien."
    assert remainder(new, old) == "Le conseiller ouvre le dossier PRV-2031-0440"


def test_a_part_about_what_the_newer_note_gives_is_not_kept() -> None:
    """The old request is answered by the newer note, not left beside it."""
    new = ("Délégation acceptée : l'assurance de prêt passe chez Prévia le 1er mars, et la cotisation du contrat "
           "de la banque s'arrête à cette date.")
    old = ("Le membre voudrait changer d'assurance de prêt ; il paie 60 euros par mois avec le contrat de sa banque ; "
           "il a deux enfants, Léa et Hugo.")
    assert remainder(new, old) == "il a deux enfants, Léa et Hugo."


def test_a_note_closed_on_its_whole_reading_stays_closed_whole() -> None:
    assert remainder("La cotisation habitation passe à 35 euros par mois.",
                     "La cotisation habitation est de 32 euros par mois.") is None  # one part
    # no single part is made untrue by the newer note: nothing to tell apart
    assert remainder("Le membre adore le jardinage.", PREMIUM_AND_OPTION) is None


def test_a_remainder_too_short_to_say_anything_is_not_kept() -> None:
    assert remainder("La cotisation habitation passe à 35 euros par mois.",
                     "La cotisation habitation est de 32 euros par mois ; c'est noté.") is None


_PART = st.sampled_from([
    "la cotisation auto est de 48 euros par mois", "le membre habite au 3 rue des Lilas à Lyon",
    "son portable est le 06 11 22 33 44", "le conseiller ajoute la garantie piscine", "06 55 44 33 22",
    "elle préfère être appelée le matin", "le dossier SIN-2026-0101 est clos", "c'est noté",
]) | st.text(min_size=0, max_size=40)


@given(new=st.lists(_PART, min_size=1, max_size=3), old=st.lists(_PART, min_size=1, max_size=4))
def test_a_remainder_is_some_of_the_old_parts_in_order_never_all(new: list[str], old: list[str]) -> None:
    old_text = " ; ".join(old)
    rest = remainder(" ; ".join(new), old_text)
    if rest is None:
        return
    pieces, kept = parts(old_text), parts(rest)
    assert 0 < len(kept) < len(pieces)
    it = iter(pieces)
    assert all(any(k == p for p in it) for k in kept)  # a subsequence: nothing reworded, nothing added
