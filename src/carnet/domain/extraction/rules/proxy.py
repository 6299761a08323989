"""Someone calling for the member: a guardian, a relative, a legal representative. Pure.

"Karine Duval, mandataire judiciaire… J'appelle pour un de vos sociétaires, M. Gilbert Chevallier";
"C'est Julien Schaller, le fils de Mme Odile Schaller"; "J'appelle avec mon père, il est client". On
such a call the member's side speaks for the member, and its "je" is the caller: "c'est moi qu'il faut
appeler pour toute décision : 04 79 …" is the caller's number, not the member's, and the name it opens
with is the caller's. Read in the member side's first two messages, where callers say who they are.

The advisor speaks to the caller too: on such a call their "vous" is the caller ("Votre père a bien un
contrat" is the caller's father, the member), except through a relay service for deaf and
hard-of-hearing people or an interpreter (``relays``), where the operator passes on the member's own
words and the advisor speaks to the member. Which words name such a service ("relais", "interprète",
"LSF", "transcription") is general knowledge of the trade: French law has large firms' customer
services reachable through one (loi n° 2016-1321 pour une République numérique, art. 105), and issue
48 names the relay operator.

A member calling about a relative their contract covers ("j'appelle pour mon fils, il a eu un
accident") is the member: a relative after "pour" is not enough, the caller must say the person is the
client, or be their representative, or name them ("pour M. …", "pour un de vos sociétaires"; a parent
named in apposition, "pour ma mère, Mme …", "pour mon père, <PERSON_2>": a member's contract covers
their children far more often than their parents, so a child named so is still the member's). A
representative says so with the words of French law for acting in another's name: the power of
attorney the caller holds ("j'ai une procuration", "j'ai la procuration": Code civil art. 1984,
"le mandat ou procuration"), a "mandataire de" or a "personne habilitée" (the family habilitation,
art. 494-1), beside the guardian and curator (art. 440). A member who gives a power of attorney ("je
voudrais faire une procuration à ma fille") does not hold one: only the holder's words count.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from carnet.domain.text import fold

_RELATIVE = r"(?:fils|fille|mari|femme|epou\w+|conjoint\w*|pere|mere|neveu|niece|frere|soeur|petite?-(?:fils|fille))"
_PARENT = r"(?:pere|mere|grand-pere|grand-mere|beau-pere|belle-mere)"
_FOR_SOMEONE = re.compile(
    r"\bj'appelle (?:pour|au nom de|de la part de) (?:un|une) (?:de vos|des) (?:societaires|adherent\w*|clients?|"
    r"assure\w*|membres)\b"
    r"|\b(?:j'appelle|je vous appelle|je suis la|je suis) (?:pour|au nom de|de la part de) "
    r"(?:m\.|mme|monsieur|madame)\s"
    r"|\b(?:il|elle) est (?:client|cliente|adherent|adherente|societaire|assure|assuree)\b"
    rf"|\bje suis (?:son|sa|le|la) (?:{_RELATIVE}|curat\w+|tut\w+|mandataire)\b"
    r"|\b(?:mandataire judiciaire|curat(?:eur|rice)|tut(?:eur|rice)) (?:de|a|pour)\b"
    rf"|\b(?:mandataire|habilitee?) (?:de|pour) (?:(?:mon|ma) {_RELATIVE}|m\.|mme|monsieur|madame|<person_\d+>)"
    r"|\bj'ai (?:une |la )?procuration\b"
    rf"|\bpour (?:mon|ma) {_PARENT}\W+(?:(?:m\.|mme|monsieur|madame)\s|<person_\d+>)"
    rf"|\b(?:le|la) {_RELATIVE} de (?:m\.|mme|monsieur|madame|<person_\d+>)"
    r"|^\W*(?:bonjour\W+)?(?:madame|monsieur)?\W*(?:<person_\d+>|\w+ \w+)\W+(?:[\w' ]{1,30}\W+)?pour (?:m\.|mme) "
)
_FIRST_MESSAGES = 2


def calls_for_someone(member_messages: Sequence[str]) -> bool:
    """The member side's first messages say it calls for the member (see the module's docstring)."""
    return any(_FOR_SOMEONE.search(fold(m)) for m in member_messages[:_FIRST_MESSAGES])


_RELAY = re.compile(r"\b(?:relais|interpret\w*|lsf|transcri\w*|tradui\w*|traduis)\b")


def relays(member_messages: Sequence[str]) -> bool:
    """The member side's first messages say an operator passes on the member's words (a relay service,
    an interpreter): the advisor then speaks to the member."""
    return any(_RELAY.search(fold(m)) for m in member_messages[:_FIRST_MESSAGES])
