"""A call made for the member (``extraction.rules.proxy``): the caller's "je" is "l'appelant", their
name is not the member's, and their phone number does not replace the member's; the advisor speaks to
the caller, unless an operator relays the member's words.

Sentences are written for these tests (general call-center French), not taken from a benchmark."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from carnet.domain.extraction.rules import extract
from carnet.domain.extraction.rules.proxy import calls_for_someone, relays
from carnet.domain.extraction.rules.rewrite_fr import ADVISOR, MEMBER, rewrite_fr
from carnet.domain.intake import Message

AT = datetime(2025, 5, 6, 14, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("opening", "proxy"),
    [
        ("Bonjour, Sylvie Marchand, mandataire judiciaire. J'appelle pour un de vos adhérents, M. Paul Roche.", True),
        ("Bonjour, Sylvie Marchand, UDAF, pour M. Roche.", True),
        ("C'est Marc Roche, le fils de Mme Jeanne Roche.", True),
        ("Bonjour, j'appelle avec ma mère, elle est cliente chez vous.", True),
        ("Je suis sa tutrice depuis mars.", True),
        ("Bonjour, Claire Roche. J'ai une procuration pour mon père.", True),  # the power of attorney she holds
        ("Bonjour, Claire Roche, personne habilitée pour ma mère, Mme Jeanne Roche.", True),
        ("Bonjour, Claire Roche, mandataire de ma mère.", True),
        ("Bonjour, <PERSON_1>, j'appelle pour mon père, <PERSON_2>.", True),  # a parent, named
        ("Bonjour, Claire Roche, pour ma mère, Mme Roche.", True),
        ("Bonjour, je voudrais faire une procuration pour ma fille.", False),  # she gives one: the member
        ("Je voudrais ajouter ma fille comme mandataire de mon compte.", False),
        ("Bonjour, j'appelle pour mon fils, <PERSON_2>, il a eu un accident.", False),  # a child: the member's contract
        ("Bonjour, j'appelle pour ma mère, elle est tombée.", False),
        ("Bonjour, j'appelle pour mon fils, il a eu un accident avec la voiture.", False),
        ("Bonjour, Paul Roche, client depuis 2012.", False),
        ("Bonjour, c'est Mme Roche. Mon fils a eu son permis.", False),
    ],
)
def test_who_calls_for_the_member(opening: str, proxy: bool) -> None:
    assert calls_for_someone([opening]) is proxy


def test_only_the_first_two_messages_say_who_calls() -> None:
    assert not calls_for_someone(["Bonjour.", "J'ai une question.", "Je suis sa tutrice."])


@pytest.mark.parametrize(
    ("said", "written"),
    [
        ("C'est moi qu'il faut appeler pour toute décision : 04 79 00 11 22.",
         "C'est l'appelant qu'il faut appeler pour toute décision : 04 79 00 11 22."),
        ("Je dois cosigner tout contrat.", "L'appelant doit cosigner tout contrat."),
        ("Il est sous curatelle renforcée.", "Il est sous curatelle renforcée."),
        ("Un monsieur m'a téléphoné hier.", "Un monsieur a téléphoné à l'appelant hier."),  # never "au membre"
        ("Il m'a envoyé le dossier.", "Il a envoyé à l'appelant le dossier."),
    ],
)  # fmt: skip
def test_the_caller_s_first_person(said: str, written: str) -> None:
    assert rewrite_fr(said, MEMBER, proxy=True) == written


def test_a_call_for_the_member_keeps_the_caller_apart() -> None:
    turns = [("user", "Bonjour, Sylvie Marchand, UDAF, pour M. Roche."),
             ("advisor", "Bonjour madame, je vous écoute."),
             ("user", "Je gère ses comptes. Appelez-moi pour toute décision : 04 79 00 11 22.")]  # fmt: skip
    messages = [Message(role, text, AT + timedelta(seconds=20 * n)) for n, (role, text) in enumerate(turns)]
    texts = [f.text for f in extract(messages, session_id="c", locale="fr").facts]
    assert not any("Le membre s'appelle" in t for t in texts), texts
    assert any(t.startswith("L'appelant gère ses comptes") for t in texts), texts


@pytest.mark.parametrize(
    ("said", "written"),
    [
        ("Votre père a bien un contrat santé, formule Confort.",
         "Le père de l'appelant a bien un contrat santé, formule Confort."),  # the member, the caller's father
        ("Je vous envoie le devis pour sa prothèse.", "Le conseiller envoie à l'appelant le devis pour sa prothèse."),
        ("Je vous rappelle demain.", "Le conseiller rappelle l'appelant demain."),
        ("Vous pouvez désigner une personne de confiance.", "L'appelant peut désigner une personne de confiance."),
    ],
)  # fmt: skip
def test_on_a_call_for_the_member_the_advisor_speaks_to_the_caller(said: str, written: str) -> None:
    assert rewrite_fr(said, ADVISOR, proxy=True) == written
    assert "membre" in rewrite_fr(said, ADVISOR, proxy=True, relay=True)  # through a relay: to the member


@pytest.mark.parametrize(
    ("opening", "relayed"),
    [
        ("Bonjour, plateforme de relais téléphonique, j'ai en ligne M. Paul Roche, malentendant.", True),
        ("Bonjour, je suis interprète en langue des signes pour Mme Roche.", True),
        ("Bonjour, service de transcription, j'appelle pour M. Roche.", True),
        ("C'est Marc Roche, le fils de Mme Jeanne Roche.", False),
        ("Bonjour, Sylvie Marchand, UDAF, pour M. Roche.", False),
    ],
)
def test_a_relay_passes_on_the_member_s_words(opening: str, relayed: bool) -> None:
    assert relays([opening]) is relayed
