"""The profile: what an advisor must always know about how to reach and treat the person, whatever
the question (DESIGN.md "profile tier").

Four kinds, recognised at write time by a French + English lexicon of call-center vocabulary, without
a model: ``contact`` (preferred channel and hours), ``accessibility`` (hearing, sight, language, a
guardian or a relative allowed to act), ``vulnerability`` (bereavement, serious illness, financial
fragility, over-indebtedness) and ``consent`` (consent to, or opposition to, marketing and
solicitation). A record is a profile record when any kind matches; the flag is stored with the record
(``Memory.profile``) so ``assemble`` reads the subject's profile records by filter, never by scanning.

The lexicon is general on purpose: word beginnings (accents folded, lower case) that name the notion
itself, not sentences of any data set. ``contact`` alone needs two things, a channel and a
preference or a time ("préfère être appelée le matin"): a bare phone number is a contact detail, not
a way of treating the person. Kinds are recomputed when read (for the prompt's headings); only the
flag is stored. The prompt's own kind labels typed into a text ("(consentement)") are not read: a text
cannot enter the tier by imitating the prompt (SECURITY.md, "Stored text is data").
"""

from __future__ import annotations

import re

from carnet.domain.quoted import labels_pattern
from carnet.domain.text import fold

CONTACT = "contact"
ACCESSIBILITY = "accessibility"
VULNERABILITY = "vulnerability"
CONSENT = "consent"
KINDS = (CONTACT, ACCESSIBILITY, VULNERABILITY, CONSENT)
# How the prompt names each kind before a profile record: "- [date] (consentement) …".
LABELS = {
    "fr": {CONTACT: "contact", ACCESSIBILITY: "accessibilité", VULNERABILITY: "vulnérabilité",
           CONSENT: "consentement"},
    "en": {CONTACT: "contact", ACCESSIBILITY: "accessibility", VULNERABILITY: "vulnerability",
           CONSENT: "consent"},
}

# Regular expressions matched at the start of a word of the folded text (accents dropped, lower
# case), separated by commas; a space stands for any blank.
_CHANNEL = r"""appel, rappel, telephon, portable, fixe, courrier, lettre, mail, e-?mail, courriel, sms, texto,
    visio, en agence, espace client, messagerie, whatsapp, call, phone, letter, text message"""
_PREFERENCE = r"""prefer, privilegi, de preference, plutot, uniquement par, seulement par, que par, joignable,
    injoignable, disponible, indisponible, ne pas (l'|l |le |la |les )?(appeler|rappeler|contacter|joindre),
    pas avant, pas apres, (avant|apres|entre|a partir de|vers) \d+ ?h, le matin, en matinee, l'apres-midi,
    en fin de journee, le soir, en soiree, pause dejeuner, le week-end, en semaine, rather, only by,
    reachable, available, only, (after|before|between) \d, mornings?, afternoons?, evenings?, do not call, don't call"""
_LANGUAGE = r"""anglais, espagnol, portugais, arabe, italien, allemand, turc, polonais, roumain, chinois, russe,
    vietnamien, wolof, tamoul, ukrainien, english, spanish, portuguese, arabic, italian, german, turkish"""
_RULES: dict[str, str] = {
    ACCESSIBILITY: r"""sourd, surdite, malentendant, mal entendant, entend mal, n'entend (pas|plus|rien), entend
        (peu|plus), auditi, appareille, prothese auditive, (parler|parle|lui parler) (fort|lentement|doucement),
        lentement et, articul, langue des signes, lsf\b, malvoyant, mal voyant, non-?voyant, aveugle, cecite,
        braille, gros caracteres, dyslex, illettr, ne (lit|sait) pas lire, ne parle pas (bien )?(le )?francais,
        parle (peu|mal) (le )?francais, (comprend|maitrise) mal le francais, non francophone, langue maternelle,
        parle (uniquement |seulement |surtout |mieux )?(en )?("""
    + _LANGUAGE.replace(",", "|")
    + r"""), interprete,
        traduct, traduire, tutelle, tuteur, tutrice, curatelle, curateur, curatrice, sauvegarde de justice,
        habilitation familiale, mandataire, mandat de protection, procuration, personne de confiance,
        represente par, representee par, (autorise|habilite)e?s? (par [^.;]{0,40} )?a\b, aidant, deaf,
        hard of hearing, hearing,
        sign language, blind, visually impaired, large print, interpreter, guardian, power of attorney,
        carer, caregiver, authori[sz]ed to act, speaks? slowly, speaks? only""",
    VULNERABILITY: r"""deuil, endeuill, deces, decede, veuf, veuve, veuvage, disparition de,
        (perdu|perdre|perd) (son|sa) (mari|femme|epouse|conjoint|compagn|fils|fille|enfant|pere|mere|emploi|
        travail), fin de vie,
        soins palliatifs, maladie grave, gravement malade, cancer, chimio, longue maladie,
        affection de longue duree, ald\b, invalidite, handicap, polyhandicap, autis, trisomi, mdph\b, aah\b,
        aeeh\b, rqth\b, depression, hospitalis, surendett,
        plan de redressement, fiche (a la )?banque de france, ficp\b, fragilite financiere,
        fragile financierement, difficultes? financiere, difficultes? (de|a) (paiement|payer|rembourser),
        du mal a (payer|rembourser), ne peut plus (payer|rembourser), impaye, retards? de paiement,
        rejets? de prelevement, precarite, precaire, chomage, licenci, perte d'emploi, rsa\b, minima sociaux,
        isole, isolement, vulnerab, fragile, bereave, widow, passed away, died, terminal, seriously ill,
        over-?indebted, debts?\b, arrears, hardship, unemployed, lost (his|her) job""",
    CONSENT: r"""consent, demarchage, demarcher, demarches? (commercial|telephoni), (etre|soit|jamais) demarchee?s?,
        prospect, sollicitation, solliciter, (etre|soit|sera|serez|seront|plus|jamais|pas) sollicitee?s?,
        (offres?|propositions?) commerciale, commerciaux,
        (appel|rappel|telephon|contact|demarch)[a-z']*( [^ .;]+)?( [^ .;]+)?( [^ .;]+)? pour (lui |leur |me |m'|
        vous |nous )?vendre,
        marketing, newsletter, lettre d'information, publicit, promotionnel, bloctel, desinscri, desabonn,
        opt-?in, opt-?out, rgpd, unsubscrib, do not contact, no marketing, advertising, promotional,
        solicitation, (s'oppose|opposee?|opposition|refuse|accepte|d'accord|accord|retire|ne veut (pas|plus)|
        ne souhaite (pas|plus))\b[^.;]*?(contact|sollicit|offre|propos|courrier|appel|mail|sms|
        information|donnees|partenaire)""",
}
# Insurance and banking products named after what they cover: "garantie décès" is a contract, not a
# bereavement; "faire opposition sur sa carte" blocks a card. Removed before the rules read the text.
_PRODUCTS = re.compile(
    r"(?<![a-z0-9])(?:(garantie|capital|assurance|contrat|prevoyance|rente|option|allocation"
    r"|indemnite|prime|forfait)s?( en cas)?( de| d')? ?(deces|obseques|invalidite|dependance"
    r"|chomage|perte d'emploi|hospitalisation)"
    r"|en cas (de |d')(deces|maladie|hospitalisation|invalidite|chomage|accident)"
    r"|opposition (sur|de|a) (sa|la|une|son) (carte|cheque|cb|prelevement))"
)
_START = r"(?<![a-z0-9])"


def _compile(words: str) -> re.Pattern[str]:
    entries = [re.sub(r"\|\s+", "|", " ".join(e.split())) for e in re.split(r",(?![^()]*\))", words) if e.strip()]
    return re.compile(_START + "(?:" + "|".join(e.replace(" ", r"\s+") for e in entries) + ")")


_COMPILED = {kind: _compile(words) for kind, words in _RULES.items()}
# The prompt's labels typed into a text ("(consentement)") are removed before the rules read it: the
# prompt's markup never decides a record's tier, only what the text says does.
_FORGED_LABELS = labels_pattern(tuple(sorted({fold(n) for names in LABELS.values() for n in names.values()})))
_CHANNEL_RE = _compile(_CHANNEL)
_PREFERENCE_RE = _compile(_PREFERENCE)


def profile_kinds(text: str) -> tuple[str, ...]:
    """The profile kinds ``text`` speaks of, in ``KINDS`` order (empty: not a profile record)."""
    folded = _PRODUCTS.sub(" ", _FORGED_LABELS.sub(" ", fold(text)))
    found = {kind for kind, rule in _COMPILED.items() if rule.search(folded)}
    if _CHANNEL_RE.search(folded) and _PREFERENCE_RE.search(folded):
        found.add(CONTACT)
    return tuple(k for k in KINDS if k in found)


def is_profile(text: str) -> bool:
    return bool(profile_kinds(text))


# A question an advisor asks before a sales pitch ("Puis-je lui proposer notre assurance obsèques ?",
# "Est-elle inscrite aux mailings ?"): the member's consent or opposition to marketing answers it.
# An offer needs a product after the verb, so "lui proposer un rendez-vous" is not one.
_PRODUCT = (r"(?:offres?|assurances?|garanties?|contrats?|produits?|formules?|options?|placements?|epargne|"
            r"credits?|prets?|services?|cartes?|abonnements?|prevoyance|mutuelle|protections?|packs?|promotions?|"
            r"publicit\w*|newsletters?|mailings?|insurance|policy|product|plan|loan|card)")
_ASKS_CONSENT = re.compile(
    r"\b(?:puis-je|je peux|peut-on|on peut|pourrais-je|pourrait-on|pourrions-nous|est-ce que (?:je peux|l'on peut|"
    r"on peut)|ai-je le droit de|a-t-on le droit de)\s+(?:lui|leur)\s+(?:proposer|presenter|vendre|parler d[eu']?|"
    r"envoyer|faire decouvrir)\s+(?:de |d'|des |du )?(?:notre|nos|une?|des|la|le|les|l')?\s*(?:nouvel\w*\s+)?"
    + _PRODUCT
    + r"|\b(?:inscrite?s?|abonnee?s?)\b[^?]{0,30}\b(?:mailings?|newsletters?|offres?|promotions?|"
    r"lettres? d'information|sms commerciaux|publicit\w*)"
    r"|\b(?:accepte|refuse|s'oppose|consent)\w*\b[^?]{0,30}\b(?:demarchage|prospection|sollicitations?|"
    r"offres? commerciales?|appels? commerciaux|publicit\w*|marketing)"
    r"|\b(?:puis-je|je peux|peut-on|on peut|pourrais-je|est-ce que (?:je peux|on peut))\s+(?:l')?enregistrer\s+"
    r"(?:notre|l'|cet|cette|la|nos)\s*(?:echanges?|appels?|conversations?|entretien|communications?)"
    r"|\b(?:can|may|could) (?:i|we) (?:offer|pitch|sell|market|propose|record)\b"
)


def asks_consent(question: str) -> bool:
    """Whether ``question`` is asked before approaching the person with an offer (so their consent
    or opposition to marketing is the answer)."""
    return _ASKS_CONSENT.search(fold(question)) is not None
