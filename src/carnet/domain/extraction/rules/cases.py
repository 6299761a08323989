"""The file a call is about, given to the notes that say where it stands without naming it. Pure.

A caller names the file once ("Coralie Perrin, dossier... SIN-2025-071228. L'expert, il passe
quand ?") or by its kind ("je vous appelle au sujet de votre dossier grêle"), and what follows says
where it stands without naming it again ("J'ai un rendez-vous le 3 juillet avec le cabinet Savoie
Expertises.", "Le dossier est clos."). Stored like that, such a note is about no file: a later status
cannot replace it (reconcile's case rule compares files), and a question naming the file does not
find it. So a note stating a file's status (``topic_rules.CASE_STATUS``) that names no reference gets
the call's file, in parentheses: "… Savoie Expertises (dossier SIN-2025-071228)." or "… le dossier est
clos (dossier grêle).". The call's summary (``episode``) is written without them (``without_file``).

The call's file is the last one named with a word that says it is a file (``CASE_NOUNS``: "dossier",
"sinistre", "réclamation"…) in the sentence or the one before it (the answer to "Vous avez un numéro
de dossier ?"); a member's or a contract's number is not one. A file named by its
kind only is labelled by the kind's name (``CASE_KINDS``): reconcile then finds its reference among the
subject's records (``topics.bridged``). A sentence naming two files, or two kinds, sets none.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from carnet.domain.linking import references
from carnet.domain.reconcile.topic_rules import CASE_KINDS, CASE_NOUNS, CASE_OPENING, CASE_PAID, CASE_STATUS
from carnet.domain.text import fold


def named(sentence: str, before: str | None = None) -> str | None:
    """The file ``sentence`` names, as a label ("SIN-2025-071228", "grêle"), or None. ``before``: what
    was said just before it (the question it answers, the start of the sentence a transcript cut:
    "dossier... SIN-2025-071228."), which may say that the reference is a file's."""
    folded = fold(sentence)
    about_a_file = CASE_NOUNS.search(folded) is not None
    refs = _codes(sentence)
    if refs and (about_a_file or (before is not None and CASE_NOUNS.search(fold(before)))):
        return next(iter(refs)) if len(refs) == 1 else None
    if not about_a_file:
        return None
    kinds = [name for name, pattern in CASE_KINDS if pattern.search(folded)]
    return kinds[0] if len(kinds) == 1 else None


_EXPERT = re.compile(r"\bexpert(?:ise)?s?\b")


def is_status(text: str) -> bool:
    """A note saying where a file stands ("le dossier est clos", "l'expert passera le 22"), not how it
    was opened: a status word, and the file or its expert named ("le loyer est maintenu" is no file's)."""
    folded = fold(text)
    return (CASE_STATUS.search(folded) is not None and CASE_OPENING.search(folded) is None
            and (CASE_NOUNS.search(folded) is not None or _EXPERT.search(folded) is not None))


# A payment said in a call about a file is the file's: "Le premier versement est parti hier : 1 800
# euros." names neither the file nor a status, and a question naming the file ("le dossier … a-t-il
# donné lieu à un paiement ?") should find it. A payment word and an amount.
# A payment's participles are reconcile's (``CASE_PAID``); its nouns and "réglé" are said of it too.
_PAID_NOUN = re.compile(r"\b(?:versements?|virements?|indemnisations?|reglee?s?)\b")
_AMOUNT = re.compile(r"\d\s*(?:euros?|eur|€)")


def is_payment(text: str) -> bool:
    """A note telling of a payment of an amount ("le conseiller verse 8 050 euros", "versement de
    1 800 €"): in a call about a file, the file's."""
    folded = fold(text)
    paid = CASE_PAID.search(folded) is not None or _PAID_NOUN.search(folded) is not None
    return paid and _AMOUNT.search(folded) is not None


def _codes(text: str) -> frozenset[str]:
    """The references ``text`` names, not the placeholders of pseudonymisation (a name, a town): the
    extractor reads pseudonymised messages, and "le cabinet <PERSON_2>" names no file."""
    return frozenset(r for r in references(text) if not r.startswith("<"))


def is_opening(text: str) -> bool:
    return CASE_OPENING.search(fold(text)) is not None


def with_file(text: str, label: str | None, *, before: Sequence[str] = ()) -> str:
    """``text`` naming the file ``label`` when it states a status or a payment and names no file of its own.
    ``before``: the notes of the same message it is joined to (``turns``): one label for all."""
    if label is None or not (is_status(text) or is_payment(text)) or _codes(text):
        return text
    if any(fold(label) in fold(t) for t in (text, *before)):
        return text
    return f"{text.rstrip('. ')}{_LABEL.format(label)}."


_LABEL = " (dossier {})"
_LABELLED = re.compile(r" \(dossier [^()]+\)")


def without_file(text: str) -> str:
    """``text`` without the labels ``with_file`` gave it: the call's summary tells what was said (an
    event, never superseded), and a file's status in it must not come up as the file's current one."""
    return _LABELLED.sub("", text)
