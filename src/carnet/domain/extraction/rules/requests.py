"""Requests: a member's question that asks for something, and imperatives of either side.

"Est-ce que je peux décaler ma première échéance ?" is a question in form and a request in
substance, the kind of thing the next advisor must know ("Demande du membre : décaler sa première
échéance"). "Rappelez-moi plutôt l'après-midi" (member) and "Envoyez-nous les photos" (advisor)
have no subject pronoun for the rewriting to turn: they are turned here, before it.
"""

from __future__ import annotations

import re

from carnet.domain.extraction.rules.verbs import third_singular

_ASKING = re.compile(
    r"^(?:et\s+)?(?:est-ce que\s+|est-ce qu')?(?:je peux|je pourrais|puis-je|pourrais-je|on peut|on pourrait|peut-on|"
    r"pourrait-on|vous pouvez|vous pourriez|pouvez-vous|pourriez-vous|il est possible de|il serait possible de|"
    r"est-il possible de|serait-il possible de|c'est possible de|ce serait possible de|"
    r"(?P<en>can i|could i|can you|could you|is it possible to|would it be possible to))\s+"
    r"(?:me\s+|m'|nous\s+)?(?P<rest>.+?)\s*\??$",
    re.IGNORECASE,
)
_INFORMATION = re.compile(
    r"^(?:dire|expliquer|indiquer|préciser|preciser|confirmer|renseigner|informer|savoir|connaître|connaitre|"
    r"rappeler (?:le|la|les|l'|ce|quel|quelle|pourquoi|comment|combien)|tell|explain|know)\b",
    re.IGNORECASE,
)
_IMPERATIVE = re.compile(r"^(?P<verb>[a-zàâéèêëîïôûç]{3,}ez|faites|dites)(?:-(?P<obj>moi|nous))?\s+(?P<rest>.*)$",
                         re.IGNORECASE)
_NOT_VERBS = frozenset({"chez", "assez", "rez"})
_INFINITIVE = {
    "faites": "faire", "dites": "dire", "prenez": "prendre", "mettez": "mettre", "transmettez": "transmettre",
    "remettez": "remettre", "joignez": "joindre", "remplissez": "remplir", "fournissez": "fournir",
    "venez": "venir", "prévenez": "prévenir", "prevenez": "prévenir", "tenez": "tenir", "lisez": "lire",
    "écrivez": "écrire", "ecrivez": "écrire", "recevez": "recevoir", "attendez": "attendre", "rendez": "rendre",
    "répondez": "répondre", "repondez": "répondre", "choisissez": "choisir", "envoyez": "envoyer",
}  # fmt: skip
_PARTICIPLE = {"prévenez": "prévenu", "prevenez": "prévenu", "tenez": "tenu", "joignez": "joint", "recevez": "reçu"}
_INDIRECT_STEMS = ("envo", "transm", "adress", "fai", "di", "écri", "ecri", "donn", "confirm", "indiqu", "communiqu")


def request(question: str) -> str | None:
    """A member's question that asks for something, as a statement; None for other questions."""
    m = _ASKING.match(question.strip())
    if m is None:
        return None
    rest = m.group("rest").rstrip(" ?")
    if _INFORMATION.match(rest):
        return None  # "pouvez-vous me dire où en est mon dossier ?" asks to know, not for something
    rest = re.sub(r"^(?:(?:de|to)\b\s*|d')|^(?:aussi|également|egalement|bien|encore|also)\s+", "", rest,
                  flags=re.IGNORECASE)
    return f"Request from the member: {rest}" if m.group("en") else f"Demande du membre : {rest}"


def imperative(sentence: str, *, advisor: bool) -> str | None:
    """"Rappelez-moi l'après-midi" (member) → "le membre demande à être rappelé l'après-midi";
    "Envoyez-nous les photos" (advisor) → "le conseiller demande au membre d'envoyer les photos"."""
    m = _IMPERATIVE.match(sentence.strip())
    if m is None or m.group("verb").lower() in _NOT_VERBS:
        return None
    verb, rest = m.group("verb").lower(), m.group("rest")
    if advisor:
        infinitive = _INFINITIVE.get(verb, verb[:-2] + "er")
        de = "d'" if infinitive[0] in "aeiouéèêh" else "de "
        return f"le conseiller demande au membre {de}{infinitive} {rest}"
    if m.group("obj") is None:
        return None
    if verb.startswith(_INDIRECT_STEMS):
        return f"le membre demande qu'on lui {third_singular(verb, '2p')} {rest}"
    return f"le membre demande à être {_PARTICIPLE.get(verb, verb[:-2] + 'é')} {rest}"
