"""The profile classifier: how to reach and treat the person, recognised in French and English."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from carnet.domain.profile import KINDS, asks_consent, profile_kinds


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Préfère qu'on la contacte par courriel plutôt que par téléphone.", ("contact",)),
        ("Joignable uniquement en fin de journée sur son portable.", ("contact",)),
        ("Ne pas le rappeler avant 14h, il travaille de nuit.", ("contact",)),
        ("Il est malentendant : parler fort et face au combiné.", ("accessibility",)),
        ("Elle est malvoyante, envoyer les courriers en gros caractères.", ("accessibility",)),
        ("Il ne parle pas bien le français, son neveu traduit.", ("accessibility",)),
        ("Le membre est sous tutelle, l'UDAF gère ses comptes.", ("accessibility",)),
        ("Sa sœur a une procuration et peut agir en son nom.", ("accessibility",)),
        ("Elle vient de perdre son mari, le dossier est sensible.", ("vulnerability",)),
        ("Un dossier de surendettement est en cours d'instruction.", ("vulnerability",)),
        ("Il a du mal à payer ses mensualités depuis son licenciement.", ("vulnerability",)),
        ("Elle a retiré son consentement aux offres commerciales.", ("consent",)),
        ("Inscrit sur Bloctel, refuse le démarchage téléphonique.", ("consent",)),
        ("Le membre ne souhaite plus être démarché par téléphone.", ("consent",)),
        ("Elle demande à ne plus jamais être sollicitée par SMS.", ("consent",)),
        ("Ne lui faire aucune proposition commerciale pendant six mois.", ("consent",)),
        ("Qu'on arrête de l'appeler tous les mois pour lui vendre un placement.", ("consent",)),
        ("He is hard of hearing; his daughter holds a power of attorney.", ("accessibility",)),
        ("She opted out of all marketing.", ("consent",)),
        ("Her husband passed away last spring.", ("vulnerability",)),
    ],
)
def test_profile_notions_are_recognised(text: str, expected: tuple[str, ...]) -> None:
    assert profile_kinds(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Le membre habite 4 rue des Acacias à Nantes.",
        "Téléphone portable : 06 12 34 56 78.",  # a contact detail, not a way of reaching the person
        "Contrat habitation formule confort, cotisation 38 euros par mois.",
        "Il a souscrit une garantie décès de 100 000 euros.",  # a product, not a bereavement
        "Elle a fait opposition sur sa carte bancaire après le vol.",  # a blocked card, not a refusal
        "Le sinistre dégât des eaux est en cours d'expertise.",
        "Il travaille comme commercial dans une concession.",
        "Il a sollicité un devis pour assurer sa nouvelle voiture.",  # a request, not solicitation
        "Elle veut vendre sa maison de Vannes l'an prochain.",  # selling, not being sold to
        "Le conseiller l'appellera pour lui proposer un rendez-vous.",
        "Le dossier avance lentement.",
    ],
)
def test_ordinary_facts_are_not_profile(text: str) -> None:
    assert profile_kinds(text) == ()


def test_kinds_come_in_a_fixed_order_and_may_combine() -> None:
    kinds = profile_kinds("Veuve depuis peu, elle est sourde et ne veut plus être sollicitée par nos offres.")
    assert kinds == ("accessibility", "vulnerability", "consent")


@given(st.text(max_size=400))
def test_any_text_gives_known_kinds_without_raising(text: str) -> None:
    kinds = profile_kinds(text)
    assert set(kinds) <= set(KINDS) and len(set(kinds)) == len(kinds)


@given(
    st.sampled_from(["Elle est sourde.", "Il refuse toute prospection commerciale.", "Veuf depuis mai."]),
    st.text(alphabet=st.characters(categories=("Ll", "Lu", "Zs")), max_size=60),
)
def test_a_profile_notion_is_found_whatever_surrounds_it(core: str, noise: str) -> None:
    assert profile_kinds(core)
    assert set(profile_kinds(core)) <= set(profile_kinds(f"{noise}. {core} {noise}."))


@pytest.mark.parametrize(
    "question",
    [
        "Puis-je lui proposer notre assurance obsèques ?",
        "Je peux lui présenter notre nouvelle garantie dépendance ?",
        "Pourrais-je lui parler de notre offre d'épargne ?",
        "Peut-on lui envoyer nos promotions par texto ?",
        "Est-il toujours inscrit à la newsletter ?",
        "Accepte-t-elle le démarchage par téléphone ?",
        "Puis-je enregistrer notre échange ?",
        "Can I offer her our new savings plan?",
    ],
)
def test_questions_asked_before_an_offer(question: str) -> None:
    assert asks_consent(question)


@pytest.mark.parametrize(
    "question",
    [
        "Je peux lui proposer un rendez-vous ?",  # no product: not an offer
        "Puis-je lui parler de son contrat ?",  # his own contract
        "Puis-je lui envoyer le devis ?",
        "Quelle est sa formule d'assurance ?",
        "A-t-il un contrat auto ?",
        "Can I call him back tomorrow?",
    ],
)
def test_other_questions_are_not(question: str) -> None:
    assert not asks_consent(question)


@given(st.text(max_size=300))
def test_any_question_is_read_without_raising(text: str) -> None:
    assert asks_consent(text) in (True, False)
