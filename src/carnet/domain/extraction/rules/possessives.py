"""Possessives in the third person: "mon contrat" → "son contrat", "Votre adresse est…" → "L'adresse
du membre est…", "votre agence" (said by the member) → "l'agence".

A sentence that opens with the speaker's possessive names its subject by it ("Mon numéro de contrat
est CTR-123456"): there the owner is spelled out ("Le numéro de contrat du membre est…"), as the
scenarios phrase facts. Elsewhere the possessive follows the noun's gender (``french_words``),
except when the advisor is the subject: "le conseiller met à jour son adresse" would be his own.
"""

from __future__ import annotations

import re
from itertools import pairwise

from carnet.domain.extraction.rules.french_words import definite, elide, elides, possessive
from carnet.domain.extraction.rules.verbs import looks_first_plural, third_plural_from_on, third_plural_from_we
from carnet.domain.extraction.rules.walk import ADVISOR, MEMBER, OF, Walk, case

# "Ma femme et moi avons acheté…" → "Le membre et sa femme ont acheté…"; spoken French resumes the
# pair with "on" and the third person singular ("Mon mari et moi, on se sépare"), or with "nous": the
# clitics between the subject and its verb ("se", "s'", "y", "en", "ne") stay, the reflexive "nous"
# becomes "se", elided as the verb asks.
_AND_ME = re.compile(r"^(mon|ma|mes|notre|nos)\s+([\w-]+)\s+et moi\b(?P<sep>(?:,?\s*(nous|on)\b)?,?\s*)"
                     r"((?:(?:ne|se|nous|y|en)\s+|(?:n|s)'\s*)*)([^\s.,;:!?]+)?", re.IGNORECASE)
# What may follow a sentence-initial "Mon X" / "Votre X": the verb that ends the noun phrase.
_NP_END = frozenset(
    """
    est sont a ont va vont vient viennent doit doivent peut peuvent veut veulent était etait étaient etaient
    avait avaient sera seront aura auront serait aurait reste restent habite habitent travaille travaillent vit
    vivent commence commencent expire expirent arrive arrivent passe passent coûte coute coûtent tient tiennent s'élève
    s'eleve change changent ne n' se s' y lui c' qui , : ; ( - a-t-il
    """.split()
)
# Object pronouns between a subject noun phrase and its verb ("Mon fils vous l'enverra").
_PRONOUNS = frozenset("me m' te t' vous nous l' le la les lui leur en y".split())
# Words that complete the noun before them in call-center French ("contrat auto", "espace client",
# "compte courant", "adresse postale"): the owner goes after them.
_COMPLEMENTS = frozenset(
    """
    auto automobile habitation santé sante prévoyance prevoyance emprunteur vie obsèques obseques décès deces
    client adhérent adherent sociétaire societaire assuré assure personnel perso professionnel pro
    courant joint épargne epargne jeune bancaire principal principale secondaire postale électronique
    electronique mail e-mail portable mobile fixe sinistre
    """.split()
)
# French grammar: after a preposition, a clitic belongs to an infinitive ("à s'occuper", "de ne pas"), not to
# the verb that ends the subject's noun phrase.
_CLITIC_ENDS = frozenset("ne n' se s' y lui c'".split())
_INFINITIVE_AFTER = frozenset("à a de d' pour sans par".split())
_FUTURE = re.compile(r"\w{2,}(?:ra|ront|rait|raient)$")
_ADJECTIVES = frozenset("nouvelle nouveau nouvel ancienne ancien premier première premiere dernier dernière "
                        "derniere prochain prochaine actuel actuelle même meme propre".split())
# French grammar: a cardinal comes between the determiner and its noun ("vos deux comptes" → "les deux comptes
# du membre"), and the endings of the adjectives French derives from nouns (-el, -al, -if, -ique, -aire, -eux and
# their feminines and plurals) follow the noun ("votre entreprise individuelle", "votre dossier médical").
_CARDINALS = frozenset("deux trois quatre cinq six sept huit neuf dix plusieurs".split())
_ADJECTIVE_ENDINGS = ("el", "elle", "els", "elles", "al", "ale", "aux", "ales", "if", "ive", "ifs", "ives", "ique",
                      "iques", "aire", "aires", "eux", "euse", "euses")


def and_me(text: str) -> str:
    m = _AND_ME.match(text)
    if m is None:
        return text
    det, noun, resumed, clitics, verb = m.group(1).lower(), m.group(2), m.group(4), m.group(5), m.group(6)
    poss = {"mon": "son", "ma": "sa", "mes": "ses", "notre": possessive(noun), "nos": "ses"}[det]
    if verb is None:  # the sentence stops there ("Mon mari et moi, on…"): the pair alone
        return f"le membre et {poss} {noun}{text[m.end():]}"
    if resumed is None and "," in m.group("sep") and not looks_first_plural(verb):
        # "Mon mari et moi, onze ans de mariage": no verb of theirs follows, the pair is named as is
        return f"le membre et {poss} {noun}{text[m.start('sep'):]}"
    plural = third_plural_from_on(verb) if (resumed or "").lower() == "on" else third_plural_from_we(verb)
    words = [*re.findall(r"\w+'?", re.sub(r"\bnous\b", "se", clitics, flags=re.IGNORECASE)), plural]
    # "se" before "en" is "s'", "s'" before "sont" is "se " (the reflexive "nous" became "se")
    group = "".join(_spaced(elide(w, nxt)) for w, nxt in pairwise(words)) + plural
    return f"le membre et {poss} {noun} {group}{text[m.end():]}"


def _spaced(clitic: str) -> str:
    return clitic if clitic.endswith(("'", " ")) else f"{clitic} "


def possessive_subject(walk: Walk) -> None:
    """"Mon numéro de contrat est…" → "Le numéro de contrat du membre est…"."""
    words = walk.words()
    owner = {MEMBER: ("mon", "ma", "mes", "notre", "nos"), ADVISOR: ("votre", "vos")}[walk.speaker]
    if len(words) < 3 or walk.low(words[0]) not in owner:
        return
    det = walk.low(words[0])
    for n, k in enumerate(words[1:7], start=1):
        if not (walk.low(k) in _NP_END or _FUTURE.search(walk.low(k)) or (n > 1 and walk.tokens[k] in ",:;(")):
            continue
        if walk.tokens[k] == "," and _decimal(walk, words[n - 1], words[n + 1] if n + 1 < len(words) else None):
            return  # "Votre part descend à 44,70 €": a decimal comma ends no noun phrase; the verb was not found
        if walk.low(k) in _CLITIC_ENDS and walk.low(words[n - 1]) in _INFINITIVE_AFTER:
            continue  # "Ma fille continue à s'occuper…": a clitic after a preposition opens an infinitive
        if n == 1:
            return
        noun = walk.tokens[words[1]]
        article = definite(noun, plural=det in ("mes", "vos", "nos"))
        if det == "ma" and not elides(noun):
            article = "la "
        walk.tokens[words[0]] = article.rstrip()
        if article.endswith("'"):
            walk.tokens[words[0] + 1] = ""
        end = n - 1
        while end > 1 and walk.low(words[end]) in _PRONOUNS:  # "Mon fils m'a offert…": the noun, not "m'"
            end -= 1
        walk.tokens[words[end]] += f" {OF[walk.owner]}"
        walk.named.add(walk.owner)
        return


def swap(walk: Walk, i: int, tok: str) -> None:
    """A possessive inside the sentence."""
    if tok in ("mon", "ma", "mes"):
        walk.tokens[i] = case(walk.tokens[i], {"mon": "son", "ma": "sa", "mes": "ses"}[tok])
        return
    words = walk.words(i + 1)
    nxt = walk.tokens[words[0]] if words else ""
    plural = tok in ("nos", "vos")
    if (tok in ("notre", "nos")) == (walk.speaker == MEMBER):  # the member's (or household's) thing
        if walk.speaker == ADVISOR and walk.last_subject == "advisor" and _of_member(walk, i):
            return
        walk.tokens[i] = case(walk.tokens[i], possessive(nxt, plural=plural))
        return
    article = definite(nxt, plural=plural)  # the company's: "votre agence" → "l'agence"
    walk.tokens[i] = case(walk.tokens[i], article.rstrip())
    if article.endswith("'") and i + 1 < len(walk.tokens) and walk.tokens[i + 1].isspace():
        walk.tokens[i + 1] = ""
    _contract(walk, i)


_CONTRACTIONS = {("de", "le"): "du", ("de", "les"): "des", ("à", "le"): "au", ("à", "les"): "aux"}


def _contract(walk: Walk, i: int) -> None:
    """The article a possessive became, after "de" or "à": "les mails de vos partenaires" → "des
    partenaires", "à votre service" → "au service"."""
    j = walk.before(i)
    if j is None:
        return
    merged = _CONTRACTIONS.get((walk.low(j), walk.low(i)))
    if merged is not None:
        walk.tokens[j] = case(walk.tokens[j], merged)
        walk.drop(i)


def _of_member(walk: Walk, i: int) -> bool:
    """"votre adresse" → "l'adresse du membre" when the noun stands alone (not "votre numéro de
    contrat", not "votre nouvelle adresse"); False leaves the possessive to the caller."""
    words = walk.words(i + 1)
    if not words or not walk.tokens[words[0]].isalpha():
        return False
    start = 1 if len(words) > 1 and walk.low(words[0]) in _CARDINALS else 0  # "vos deux comptes"
    following = walk.low(words[start + 1]) if len(words) > start + 1 else ""
    if following in ("de", "d'", "des", "du") or (following.isalpha() and following.endswith(("é", "ée"))):
        return False
    if walk.low(words[start]) in _ADJECTIVES or not walk.tokens[words[start]].isalpha():
        return False
    article = definite(walk.tokens[words[0]], plural=walk.low(i) == "vos")
    walk.tokens[i] = article.rstrip()
    if article.endswith("'") and walk.tokens[i + 1].isspace():
        walk.tokens[i + 1] = ""
    end = start
    while end + 1 < len(words) and _completes(walk.low(words[end + 1])):
        end += 1  # "votre contrat auto" → "le contrat auto du membre", not "le contrat du membre auto"
    walk.tokens[words[end]] += f" {OF[walk.addressee]}"
    return True


def _completes(word: str) -> bool:
    """The word after a noun completes it: a complement of the trade, or an adjective by its ending."""
    return word in _COMPLEMENTS or (len(word) > 4 and word.isalpha() and word.endswith(_ADJECTIVE_ENDINGS))


def _decimal(walk: Walk, before: int, after: int | None) -> bool:
    return after is not None and walk.tokens[before].isdigit() and walk.tokens[after][:1].isdigit()
