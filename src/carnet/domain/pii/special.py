"""Special categories of personal data (GDPR art. 9, and art. 10 for judicial matters), flagged at
write time by rules, without a model.

A record that mentions health, a disability, a religion, union membership, judicial matters, sexual
orientation, political opinions or ethnic origin gets the category's name. The flag drives a
retention class and an access policy per tenant (an agent key may be kept from reading some
categories); the record stays pseudonymised and sealed like any other. The rules err towards
flagging: a false flag costs a shorter retention or a hidden record, a missed one exposes data the
law protects more.
"""

from __future__ import annotations

import re
import unicodedata

HEALTH = "health"
DISABILITY = "disability"
RELIGION = "religion"
UNION = "union"
JUDICIAL = "judicial"
SEXUAL_ORIENTATION = "sexual_orientation"
POLITICAL = "political"
ETHNIC_ORIGIN = "ethnic_origin"

# Word beginnings (accents folded, lower case), French then English, separated by commas; a phrase
# matches as written. A rule matches at the start of a word.
_RULES: dict[str, str] = {
    HEALTH: """maladie, malade, hospitalis, hopital, clinique, cancer, tumeur, chimio, radiotherap, diabet, insulin,
        cardiaque, infarctus, avc, depression, depressi, anxiete, burn-out, burnout, psychiatr, psycholog,
        therapie, medecin, medicament, traitement medical, soins medicaux, ordonnance, operation chirurgicale,
        opere, chirurgi, enceinte, grossesse, accouch, fausse couche, arret maladie, arret de travail, covid, vih,
        sida, hepatite, alzheimer, parkinson, epilep, asthme, dialyse, greffe, allergi, addiction, alcoolis,
        toxicoman, urgences, kine, illness, sick, hospital, diabetes, pregnan, surgery, therapy, medication""",
    DISABILITY: """handicap, invalidite, invalide, fauteuil roulant, mdph, aah, rqth, malvoyant, aveugle, sourd,
        malentendant, paraplegi, tetraplegi, autis, trisomi, mobilite reduite, pmr, disabilit, wheelchair""",
    RELIGION: """religion, religieu, musulman, islam, mosquee, ramadan, halal, chretien, catholique, protestant,
        evangeli, eglise, paroisse, juif, juive, judaisme, synagogue, casher, kasher, bouddhis, hindou, sikh,
        athee, pretre, imam, rabbin, muslim, christian, jewish, church, mosque""",
    UNION: """syndicat, syndiqu, syndical, cgt, cfdt, cfe-cgc, cftc, unsa, delegue du personnel, greve,
        trade union, union member, on strike""",
    JUDICIAL: """condamn, casier judiciaire, tribunal correctionnel, cour d'assises, garde a vue, incarcer, detenu,
        en detention, en prison, penal, plainte contre, mis en examen, inculp, sursis, bracelet electronique,
        delit, crime, amende penale, convicted, arrested, criminal record""",
    SEXUAL_ORIENTATION: """homosexu, gay, lesbien, bisexu, transgenre, lgbt, orientation sexuelle""",
    POLITICAL: """parti politique, militant politique, opinion politique, elu municipal, conseiller municipal,
        adherent du parti""",
    ETHNIC_ORIGIN: """origine ethnique, ethnie, appartenance raciale""",
}


def _fold(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)).lower()


def _compile(words: str) -> re.Pattern[str]:
    entries = sorted({" ".join(e.split()) for e in words.split(",") if e.strip()}, key=len, reverse=True)
    return re.compile(r"(?<![a-z0-9])(?:" + "|".join(re.escape(e).replace(r"\ ", r"\s+") for e in entries) + ")")


_COMPILED = {category: _compile(words) for category, words in _RULES.items()}
CATEGORIES = tuple(_RULES)


def special_categories(text: str) -> tuple[str, ...]:
    folded = _fold(text)
    return tuple(c for c, rule in _COMPILED.items() if rule.search(folded))
