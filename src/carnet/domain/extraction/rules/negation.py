"""Spoken negation written out: "je veux pas" → "je ne veux pas", "j'habite plus là" → "je n'habite plus là".

Why: on the phone "ne" is mostly dropped, and once the statement is in the third person the written
form without it reads otherwise ("le membre travaille plus chez Renault" reads as "more"), while
reconcile and the readers of a fact look for "ne … plus" and "ne … pas". The second part of a
negation (pas, jamais, rien, personne, aucun, plus) right after a subject pronoun, its object
pronouns and one verb gets its "ne" back, unless one is already there.

"plus" is a negation only where it cannot be a comparison: not before "que", a number ("plus de 60
ans"), or a word that compares ("plus cher", "plus tard", "plus souvent"). "pas mal" (quite a lot) and
"plus ou moins" are left as they are.
"""

from __future__ import annotations

import re

# Not right after a "ne" already there: "il ne nous répond pas", "ça ne vous concerne pas" ("nous" and
# "vous" are object pronouns there, not subjects).
_SUBJECT = r"(?<!ne )(?<!n')(?P<subject>\b(?:je |j'|tu |il |elle |on |nous |vous |ils |elles |c'|ce |ça |ca |cela ))"
_CLITICS = r"(?P<clitics>(?:(?:me |m'|te |t'|se |s'|le |la |les |l'|lui |leur |en |y |nous |vous )){0,3})"
_VERB = r"(?P<verb>[a-zàâäçéèêëîïôöùûüœ]+)"
_SECOND = r"(?P<second> (?:pas|jamais|rien|personne|aucune?|plus)\b)(?=(?P<after>(?: [^ ]+){0,2}))"
_SPOKEN = re.compile(_SUBJECT + _CLITICS + _VERB + _SECOND, re.IGNORECASE)
# A "subject" right after a "ne" and object pronouns is one of them ("je ne vous vous je pas": the
# second "vous" belongs to the negation the first one opened): that negation has its "ne" already.
_NE_BEFORE = re.compile(r"(?:\bne |\bn')(?:me |m'|te |t'|se |s'|le |la |les |l'|lui |leur |en |y |nous |vous ){0,3}$",
                        re.IGNORECASE)
_LOOK_BACK = 40  # characters: "ne" and three object pronouns

# After "plus", words that make it a comparison.
_COMPARING = frozenset("""que qu' cher chère chere chers chères cheres tard tôt tot souvent vite loin près pres grand
    grande grands grandes petit petite petits petites important importante importants élevé eleve élevée elevee
    facile simple simplement bas haut fort forte longtemps beaucoup rapide rapidement court courte long longue
    âgé age âgée agee jeune jeunes gros grosse ou précisément precisement exactement récent recent
    ancien ancienne vieux vieille bon bonne mauvais mal mieux moins intéressant interessant avantageux
    avantageuse économique economique calme proche lourd lourde légère legere""".split())
_VERB_NOT = frozenset("ne n' que qu' et ou mais si pas plus très tres".split())
_VOWEL = re.compile(r"^[aeiouyhàâäéèêëîïôöùûü]", re.IGNORECASE)


def spoken_ne(sentence: str) -> str:
    """``sentence`` with the dropped "ne" of each spoken negation put back (nothing else changes)."""
    return _SPOKEN.sub(_with_ne, sentence)


def _with_ne(m: re.Match[str]) -> str:
    subject, clitics, verb, second = (m.group(k) for k in ("subject", "clitics", "verb", "second"))
    word = second.strip().lower()
    nxt = (m.group("after") or "").strip().lower()
    if verb.lower() in _VERB_NOT or (word == "pas" and nxt.startswith("mal")):
        return m.group(0)
    if _NE_BEFORE.search(m.string[max(0, m.start() - _LOOK_BACK) : m.start()]):
        return m.group(0)
    if word == "plus" and _comparing(nxt.split()):
        return m.group(0)
    ne = "n'" if _VOWEL.match(clitics or verb) else "ne "
    return _unelided(subject) + ne + clitics + verb + second


def _comparing(following: list[str]) -> bool:
    """After "plus": "que", a comparing word, a number, or "de"/"d'" and a number ("plus de 60 ans")."""
    if not following:
        return False
    first = following[0].rstrip(",.;:!?")
    if first in _COMPARING or first.startswith(("qu'", "d'1", "d'2", "d'3", "d'4", "d'5", "d'6", "d'7", "d'8",
                                                "d'9")) or first[:1].isdigit():
        return True
    return first == "de" and len(following) > 1 and following[1][:1].isdigit()


def _unelided(subject: str) -> str:
    """"j'" and "c'" before "ne": "je", "ce" (spelled as the original: "J'" → "Je")."""
    return subject[0] + "e " if subject.lower() in ("j'", "c'") else subject
