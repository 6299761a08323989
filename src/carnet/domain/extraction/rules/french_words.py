"""Small French word facts the rewriting needs: a noun's gender, articles, possessives, elision.

"votre adresse" becomes "son adresse", "votre franchise" "sa franchise", "votre contrat" "son
contrat": the possessive follows the noun's gender, which French spelling half tells (``-tion``,
``-ance``, ``-té`` are feminine) and a short list of call-center nouns tells for the rest. A wrong
guess reads as a typo in a prompt; it never changes what a fact says.
"""

from __future__ import annotations

import re
import unicodedata

# Feminine nouns of insurance and banking calls that the endings below do not catch.
_FEMININE = frozenset(
    """
    adresse assurance banque carte cotisation prime franchise garantie formule police mutuelle offre option
    facture échéance echeance mensualité mensualite somme date demande déclaration declaration réclamation
    reclamation situation maison voiture moto femme épouse epouse fille mère mere soeur sœur famille agence
    attestation résiliation resiliation indemnisation indemnité indemnite souscription pièce piece photo
    copie plainte fuite toiture cuisine salle chambre cave porte fenêtre fenetre vitre assistance agente
    conseillère conseillere experte intervention visite expertise entreprise société societe caisse rue
    avenue ville commune région region adhésion adhesion cliente adhérente adhesion retraite pension
    allocation aide dette créance creance échéance durée duree clé cle clef signature réponse reponse
    lettre semaine journée journee matinée matinee soirée soiree heure fois boîte boite messagerie
    ligne box couverture protection responsabilité responsabilite valeur prise charge procédure procedure
    nouvelle ancienne première premiere dernière derniere maman mamie tante nièce niece cousine compagne
    conjointe voisine amie personne démarche demarche part fiche paie paye vue dent prothèse prothese
    lunette lunettes ordonnance consultation hospitalisation opération operation naissance grossesse
    sœur soeur belle-mère belle-mere grand-mère grand-mere fiancée fiancee tutelle curatelle procuration
    rente épargne epargne quotité quotite caution hypothèque hypotheque banque appli application
    """.split()
)
_MASCULINE = frozenset(
    """
    contrat dossier sinistre compte livret prêt pret crédit credit devis courrier email mail courriel
    numéro numero téléphone telephone portable mari époux epoux fils père pere frère frere logement
    appartement véhicule vehicule rendez-vous remboursement prélèvement prelevement virement chèque cheque
    paiement montant tarif plafond budget apport expert conseiller agent service espace code rib iban
    bonus malus côté cote comité comite été traité traite
    """.split()
)
_FEMININE_ENDINGS = ("tion", "sion", "ance", "ence", "ure", "té", "tie", "ette", "ise", "ine", "ière", "iere",
                     "elle", "esse", "ade", "ude", "ée", "ie", "ique", "aine", "eine", "oire",
                     "trice")
_VOWEL_START = re.compile(r"^[aeiouyhàâäéèêëîïôöûüœ]", re.IGNORECASE)
# "h aspiré": no elision before these.
_ASPIRATED = ("hausse", "haut", "hall", "hangar", "handicap", "harcèlement", "harcelement", "hasard", "héros")


def _bare(word: str) -> str:
    return unicodedata.normalize("NFC", word.lower().strip())


def is_feminine(noun: str) -> bool:
    w = _bare(noun)
    if w in _FEMININE:
        return True
    if w in _MASCULINE:
        return False
    singular = w[:-1] if w.endswith("s") and len(w) > 3 else w
    if singular in _FEMININE:
        return True
    if singular in _MASCULINE:
        return False
    return singular.endswith(_FEMININE_ENDINGS)


def elides(word: str) -> bool:
    """Does ``le``/``la``/``de``/``ne`` lose its vowel before ``word``?"""
    w = _bare(word)
    return bool(_VOWEL_START.match(w)) and not w.startswith(_ASPIRATED)


def definite(noun: str, *, plural: bool = False) -> str:
    """``le``, ``la``, ``l'`` or ``les`` for ``noun`` (no space after ``l'``)."""
    if plural:
        return "les "
    if elides(noun):
        return "l'"
    return "la " if is_feminine(noun) else "le "


def possessive(noun: str, *, plural: bool = False) -> str:
    """Third-person singular possessive: ``son``, ``sa``, ``ses`` (``son`` before a vowel)."""
    if plural:
        return "ses"
    if elides(noun) or not is_feminine(noun):
        return "son"
    return "sa"


def elide(word: str, following: str) -> str:
    """``ne`` → ``n'``, ``se`` → ``s'``, ``le``/``la`` → ``l'``, ``me`` → ``m'`` before a vowel; and back."""
    short = {"ne": "n'", "se": "s'", "le": "l'", "la": "l'", "me": "m'", "te": "t'", "de": "d'", "que": "qu'"}
    w = word.lower().replace("’", "'")
    if elides(following):
        return short.get(w, word)
    long = {"n'": "ne ", "s'": "se ", "m'": "me ", "t'": "te ", "d'": "de ", "qu'": "que "}
    return long.get(w, word)


_SPACES = re.compile(r"\s{2,}")
_CONTRACTED = (
    (re.compile(r"\b([dD])e le (membre|conseiller|foyer)\b"), r"\1u \2"),
    (re.compile(r"\b(?:[àÀ]|[aA]) le (membre|conseiller|foyer)\b"), r"au \1"),
    # a possessive spelled out after a preposition: "à votre fils" → "au fils du membre"
    (re.compile(r"\b([àÀ]) le ([\w-]+ (?:du membre|de l'appelant))(?!\w)"), r"au \2"),
    (re.compile(r"\b([àÀ]) les ([\w-]+ (?:du membre|de l'appelant))(?!\w)"), r"aux \2"),
    (re.compile(r"\b([dD])e le ([\w-]+ (?:du membre|de l'appelant))(?!\w)"), r"\1u \2"),
    (re.compile(r"\b([dD])e les ([\w-]+ (?:du membre|de l'appelant))(?!\w)"), r"\1es \2"),
    # "un de nos sociétaires" → "un des sociétaires" (the possessive became an article)
    (re.compile(r"\b((?:[lL]')?[uU]n(?:es?)?|[aA]ucune?|[cC]hacune?) de les\b"), r"\1 des"),
)
_SPACE_BEFORE = re.compile(r"\s+([,.])")
_ELIDED_SPACE = re.compile(r"(?<![\w])([nNsSlLmMtTdDjJ]|[qQ]u)' +")
# Not after a hyphen: a pronoun after an imperative never elides ("Transférez-le à l'adresse").
_UNELIDED = re.compile(r"(?<!-)\b(ne|se|le|la|de|que) (?=[\w-]+)", re.IGNORECASE)
# An elided word before a consonant can only come from a rewrite ("qu'on" → "qu'le foyer").
_OVERELIDED = re.compile(r"\b(qu|[nNsSdD])'(?=[bcdfgjklmnpqrstvwxzBCDFGJKLMNPQRSTVWXZ])")


def finish(text: str) -> str:
    """A rebuilt sentence made tidy: single spaces, "de le membre" → "du membre", elisions redone
    around the words that changed ("ne a" → "n'a", "n' habite" → "n'habite"), a final period and
    an initial capital."""
    text = _SPACES.sub(" ", text).strip()
    for pattern, repl in _CONTRACTED:
        text = pattern.sub(repl, text)
    text = _ELIDED_SPACE.sub(r"\1'", text)
    text = _UNELIDED.sub(_elided_or_not, text)
    text = _OVERELIDED.sub(lambda m: m.group(1) + "e ", text)
    text = _SPACE_BEFORE.sub(r"\1", text)
    text = text.rstrip(" ,;:-!")
    if not text.endswith((".", "?", "…")):
        text += "."
    return capitalize_first(text)


def _elided_or_not(m: re.Match[str]) -> str:
    word = re.match(r"[\w-]+", m.string[m.end():])
    if word is None or not elides(word.group(0)):
        return m.group(0)
    return m.group(1)[:-1] + "'"  # ne → n', que → qu'


def capitalize_first(text: str) -> str:
    """Upper-case the first character if it is a letter (not "42 ans", not a ``<PLACEHOLDER_1>``)."""
    stripped = text.lstrip("«\"“( ")
    if not stripped or not stripped[0].isalpha():
        return text
    i = len(text) - len(stripped)
    return text[:i] + stripped[0].upper() + stripped[1:]
