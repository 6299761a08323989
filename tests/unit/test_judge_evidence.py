"""The judge's evidence (``domain/reconcile/evidence``): defined for any text, values masked, named."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from carnet.domain.reconcile.evidence import (
    FEATURES,
    Side,
    features,
    mask,
    no_change_of_it,
    opened_case,
    other_case,
    other_contract,
    other_persons_value,
    ranks,
    read,
    relatives_state,
    value_owners,
)

AT = datetime(2025, 3, 1, tzinfo=UTC)
texts = st.text(max_size=200)


def side(text: str, days: int = 0, tokens: frozenset[str] = frozenset()) -> Side:
    return Side(read(text), AT + timedelta(days=days), tokens)


@settings(max_examples=150, deadline=None)
@given(texts, texts, st.floats(-1, 1), st.integers(1, 20))
def test_every_pair_of_texts_gives_one_finite_value_per_named_feature(a: str, b: str, cosine: float,
                                                                      rank: int) -> None:
    x = features(side(a), side(b, 3), cosine=cosine, rank=rank, best=1.0)
    assert len(x) == len(FEATURES) and all(math.isfinite(v) for v in x)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 99_999), st.integers(0, 99_999))
def test_a_changed_amount_leaves_the_masked_note_alike_and_says_the_values_differ(a: int, b: int) -> None:
    old, new = f"Prime mensuelle de {a} € prélevée le 5.", f"Prime mensuelle de {b} € prélevée le 5."
    x = dict(zip(FEATURES, features(side(old), side(new, 30), cosine=0.9, rank=1, best=0.9), strict=True))
    assert mask(old) == mask(new) and x["overlap_masked"] == 1.0
    assert x["values_differ"] == float(a != b) and x["shared_value_types"] >= 1


def test_masking_keeps_the_kind_of_each_value_and_drops_the_value() -> None:
    masked = mask("Virement de 2.340,00 EUR le 04/03/2025 vers <IBAN_1>, dossier SIN-2025-0712.")
    assert not any(ch.isdigit() for ch in masked.replace("iban", ""))
    assert "montant" in masked and "date" in masked and "iban" in masked and "nombre" in masked


def test_time_negation_reference_and_rank_are_read() -> None:
    x = dict(zip(FEATURES, features(side("Le membre accepte les SMS.", 0, frozenset({"t1"})),
                                    side("Le membre ne veut plus de SMS.", 400, frozenset({"t1"})),
                                    cosine=0.8, rank=2, best=0.9), strict=True))
    assert x["negation_flip"] == 1.0 and x["negation_new"] == 1.0 and x["change_new"] == 1.0
    assert x["shared_reference"] == 1.0 and x["same_day"] == 0.0 and x["log_days"] == math.log1p(400)
    assert x["inverse_rank"] == 0.5 and math.isclose(x["margin"], -0.1)


@pytest.mark.parametrize(("text", "owners"), [
    ("Portable du membre : <PHONE_1>.", {"phone": {"member"}}),
    ("Numéro de son fils pour son livret : <PHONE_2>.", {"phone": {"relative"}}),
    ("Le fils a appelé. Portable du membre : <PHONE_1>.", {"phone": {"member"}}),  # another sentence
    ("Nouveau portable du membre : <PHONE_1> ; celui de sa fille : <PHONE_2>.", {"phone": {"member", "relative"}}),
    ("Mail de sa curatrice : <EMAIL_1> ; IBAN du membre <IBAN_1>.", {"email": {"relative"}, "iban": {"member"}}),
    ("Le membre habite au <ADDRESS_1>.", {}),
])
def test_whose_contact_value_a_note_gives(text: str, owners: dict[str, set[str]]) -> None:
    assert {k: set(v) for k, v in value_owners(text)} == owners


def test_another_persons_value_is_told_from_a_change_of_the_same_persons() -> None:
    """"Numéro de son fils … : <PHONE_2>" after "Portable du membre : <PHONE_1>": not the member's phone. One
    relative's number after another's, or the member's after the member's, may be a change."""
    def other(old: str, new: str) -> bool:
        return other_persons_value(side(old), side(new, 90))

    assert other("Portable du membre : <PHONE_1>.", "Numéro de son fils pour son livret : <PHONE_2>.")
    assert other("Mail de sa fille : <EMAIL_1>.", "Mail : <EMAIL_2>.")
    assert not other("Personne à prévenir : son fils, <PHONE_1>.", "À prévenir désormais : sa nièce, <PHONE_2>.")
    assert not other("Portable : <PHONE_1>.", "Nouveau portable : <PHONE_2> ; celui de sa fille : <PHONE_3>.")
    assert not other("Portable : <PHONE_1>.", "Adresse : <ADDRESS_1>.")  # no kind in common


@pytest.mark.parametrize(("old", "new", "other"), [
    ("Contrat auto : prime de 60 euros par mois.", "Contrat habitation : prime de 25 euros par mois.", True),
    ("Assurance vie : versement programmé de 100 € par mois.", "PEA : versement programmé de 100 € par mois.", True),
    ("Contrat auto : prime de 60 euros par mois.", "Contrat auto : la prime passe à 64 euros.", False),  # one line
    ("Contrat auto : prime de 60 euros par mois.", "La prime passe à 64 euros par mois.", False),  # names none
    ("Auto-entrepreneur depuis 2019.", "Contrat habitation : prime de 25 euros.", False),  # a status, no line
    ("Prêt immobilier : 150 000 euros restant dus.", "Prêt auto : 8 000 euros restant dus.", True),  # two credits
    ("Questionnaire de santé rempli.", "Assurance emprunteur : 31 euros par mois.", False),  # health, no contract
])
def test_two_notes_naming_other_lines_of_business_are_about_two_contracts(old: str, new: str, other: bool) -> None:
    assert other_contract(side(old), side(new, 30)) is other
    assert no_change_of_it(side(old), side(new, 30)) is other


@pytest.mark.parametrize(("old", "new", "other"), [
    ("Sinistre dégât des eaux SIN-2025-001 ouvert le 3 mars.", "Sinistre bris de glace SIN-2025-044 ouvert.", True),
    ("Réclamation RC-25-0418 ouverte.", "Réclamation RC-25-0418 close : 95 € remboursés.", False),  # the same case
    ("Prêt PP-2023-118452 : mensualité de 268 €.", "Plan REC-25-0917 accepté : mensualité de 180 €.", False),  # kinds
    ("Sinistre SIN-2025-001 ouvert.", "Le membre a changé d'adresse.", False),  # one names no case
])
def test_two_cases_of_one_kind_are_told_from_the_steps_of_one(old: str, new: str, other: bool) -> None:
    assert other_case(side(old), side(new, 30)) is other


@pytest.mark.parametrize(("old", "new", "other"), [
    ("Travaille chez Renault comme technicien.", "Son épouse travaille chez Airbus.", True),
    ("Adresse : <ADDRESS_1>.", "Sa fille habite désormais à Nice.", True),
    ("Personne à prévenir : son fils, <PHONE_1>.", "Son fils a changé de numéro : <PHONE_2>.", False),  # named
    ("Adresse : <ADDRESS_1>.", "Vit désormais chez sa fille, <ADDRESS_2>.", False),  # the member's own state
    ("Travaille chez Renault.", "Le membre travaille chez Airbus depuis mars.", False),
])
def test_a_relatives_state_says_nothing_of_a_record_that_names_none(old: str, new: str, other: bool) -> None:
    assert relatives_state(side(old), side(new, 30)) is other
    assert no_change_of_it(side(old), side(new, 30)) is other


_PIECES = st.sampled_from(["Contrat auto", "contrat habitation", "Prêt immobilier", "livret A", "assurance vie",
                           "SIN-2025-001", "SIN-2025-044", "RC-25-1093", "Son épouse", "sa fille", "travaille",
                           "prime de 60 €", "ouvert", ":", ",", ".", "Auto-entrepreneur", "<CONTRACT_1>"])


@settings(max_examples=200, deadline=None)
@given(st.lists(_PIECES, max_size=8).map(" ".join), st.lists(_PIECES, max_size=8).map(" ".join))
def test_another_contract_or_case_is_a_relation_of_both_notes_and_never_of_one_note_to_itself(a: str, b: str) -> None:
    """Generated notes from the pieces the rules read: another contract and another case hold both ways and never
    between a note and itself; a relative's state never holds against a record that names a relative."""
    assert other_contract(side(a), side(b, 30)) == other_contract(side(b), side(a, 30))
    assert other_case(side(a), side(b, 30)) == other_case(side(b), side(a, 30))
    assert not other_contract(side(a), side(a, 30)) and not other_case(side(a), side(a, 30))
    if read(a).relatives:
        assert not relatives_state(side(a), side(b, 30))


@pytest.mark.parametrize(("text", "once"), [
    ("Attestation envoyée une seule fois sur le mail pro <EMAIL_2>.", True),
    ("Retraits EXCEPTIONNELLEMENT portés à 100 € sur la semaine.", True),
    ("Hôtel prolongé à titre exceptionnel.", True),
    ("Exception ponctuelle : accepte un appel jeudi.", True),
    ("Le membre a changé de portable : <PHONE_2>.", False),
    ("Prélèvement le 5 de chaque fois.", False),
])
def test_a_state_said_to_hold_once_is_read(text: str, once: bool) -> None:
    assert read(text).once is once
    assert no_change_of_it(side("Mail de contact : <EMAIL_1>."), side(text, 30)) is once


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=30), st.sampled_from(["<PHONE_1>", "<PHONE_2>", "<EMAIL_1>", "<IBAN_1>",
                                                                   "son fils", "sa fille", " ; ", ". "])), max_size=8))
def test_whose_value_is_read_for_any_text_and_only_for_contact_values(parts: list[str]) -> None:
    """Any text: a kind is read only when a placeholder of it is there, each value is someone's, and a note
    never gives another person's value than its own."""
    text = "".join(parts)
    owners = dict(value_owners(text))
    assert set(owners) <= {k for k in ("phone", "email", "iban") if f"<{k.upper()}_" in text}
    assert all(v and v <= {"member", "relative"} for v in owners.values())
    assert not other_persons_value(side(text), side(text, 30))


def test_ranks_share_the_better_place_on_ties() -> None:
    assert ranks([0.5, 0.9, 0.9, 0.1]) == [3, 1, 1, 4]


def test_topic_relatives_and_duration_are_read() -> None:
    def pair(old: str, new: str) -> dict[str, float]:
        return dict(zip(FEATURES, features(side(old), side(new, 30), cosine=0.9, rank=1, best=0.9), strict=True))

    moved = pair("Le membre habite à Lyon 7e.", "Le membre a déménagé : il réside désormais à Grenoble.")
    assert moved["same_topic"] == 1.0 and moved["other_topics"] == 0.0
    assert moved["relative_differs"] == 0.0 and moved["temporary_new"] == 0.0
    apart = pair("Portable : <PHONE_1>.", "Prime mensuelle de 42 € prélevée le 5.")
    assert apart["same_topic"] == 0.0 and apart["other_topics"] == 1.0
    relative = pair("Portable : <PHONE_1>.", "Son fils est joignable au <PHONE_2>.")
    assert relative["relative_differs"] == 1.0 and relative["relative_shared"] == 0.0
    both = pair("Sa fille a procuration.", "Sa fille a un nouveau portable : <PHONE_2>.")
    assert both["relative_shared"] == 1.0 and both["relative_differs"] == 0.0
    stay = pair("Adresse : <ADDRESS_1>.", "Hébergé chez sa sœur jusqu'au 31/08, le temps des travaux.")
    assert stay["temporary_new"] == 1.0 and stay["temporary_old"] == 0.0


def test_the_possessive_son_is_not_read_as_a_relative() -> None:
    assert read("Son contrat auto est résilié.").relatives == frozenset()


def test_the_note_that_opened_a_case_is_told_from_the_steps_that_follow() -> None:
    """A case's first note in view is its opening; each later note naming the reference is a step. A phone
    said again, or the member's own number, names no case."""
    opening = side("Réclamation <CONTRACT_1> ouverte, réf. RC-25-0418 : prélèvement contesté.", 0)
    step = side("RC-25-0418 : en analyse, réponse sous 10 jours.", 20)
    new = side("RC-25-0418 close : 80 € remboursés.", 40)
    phone = side("Portable : <PHONE_1>. Adhérent ADH-0042.", -30)
    phone_again = side("Nouveau portable : <PHONE_2>, l'ancien <PHONE_1> résilié. Adhérent ADH-0042.", 50)
    view = [new, opening, step, phone]
    assert opened_case(opening, new, view) and not opened_case(step, new, view)
    assert not opened_case(phone, new, view)  # no reference in common
    assert read("Portable : <PHONE_1>, <IBAN_1>, <EMAIL_1>, <PERSON_1>.").references == frozenset()
    assert not opened_case(phone, phone_again, [phone_again, phone], own=frozenset({"ADH-0042"}))
    assert opened_case(phone, phone_again, [phone_again, phone])  # the number, when no one says it is the member's
    x = dict(zip(FEATURES, features(opening, new, cosine=0.9, rank=1, best=0.9, opened=True), strict=True))
    assert x["reference_opened"] == 1.0
    undated = Side(opening.reading, None, opening.tokens)
    assert not opened_case(undated, new, view)  # an undated note opens nothing


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(-400, 400), st.sets(st.sampled_from("abc"), max_size=3)), min_size=1,
                max_size=8), st.randoms(use_true_random=False))
def test_exactly_the_earliest_note_naming_a_shared_reference_opened_it(notes: list[tuple[int, set[str]]],
                                                                        rnd: object) -> None:
    refs = {"a": "RC-25-0418", "b": "<CONTRACT_2>", "c": "contrat habitation"}
    new = side(f"Dossier {refs['a']} clos.", 500)
    olds = [side(f"Note {i} : " + " ".join(refs[t] for t in sorted(ts)) + ".", d) for i, (d, ts) in enumerate(notes)]
    view = [new, *olds]
    order = list(view)
    rnd.shuffle(order)  # type: ignore[attr-defined]
    naming = [o for o in olds if refs["a"] in o.reading.references]
    first = min((AT + timedelta(days=d) for d, t in notes if "a" in t), default=None)
    for o in olds:
        assert opened_case(o, new, order) == (o in naming and o.valid_from == first)
