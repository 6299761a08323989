"""Category and importance of a fact, by weighted keywords (French and English).

A fixed, small set of categories, the ones call-center notes are filed under, so that filters and
retention policies can rely on them. Every keyword that matches adds its weight to its category
and the heaviest wins (ties go to the earlier category in ``CATEGORIES``): "elle passe de la
formule Confort à Essentielle pour réduire sa cotisation" is about the contract more than the
payment, "perdu sa carte bancaire, opposition faite" about a payment means more than a product.

Decisions are the advisor's commitments and the outcomes announced during the call ("je vous
envoie…", "un expert passera…", "nous avons procédé au remboursement"): they are what the next
advisor must not contradict, hence the highest importance with claims.

Patterns read ``text.fold`` output (casefolded, accents removed).
"""

from __future__ import annotations

import re

from carnet.domain.profile import is_profile
from carnet.domain.text import fold

CATEGORIES = ("decision", "reclamation", "sinistre", "adresse", "preference", "contact", "contrat", "paiement",
              "famille", "projet", "autre")
IMPORTANCE = {
    "decision": 0.8, "sinistre": 0.8, "reclamation": 0.75, "contrat": 0.7, "paiement": 0.7, "adresse": 0.6,
    "preference": 0.55, "contact": 0.55, "famille": 0.55, "projet": 0.5, "autre": 0.3,
}  # fmt: skip
PROFILE_IMPORTANCE = 0.8


def _table(*rows: tuple[str, float, str]) -> tuple[tuple[str, float, re.Pattern[str]], ...]:
    return tuple((cat, w, re.compile(p)) for cat, w, p in rows)


_KEYWORDS = _table(
    ("sinistre", 3.0, r"\bsinistres?\b|\bdegats? des eaux\b|\bdeclaration de sinistre\b|\bclaims?\b|\bwater damage\b"),
    ("sinistre", 2.0, r"\b(?:fuite|inondation|incendie|cambriol\w*|bris de glace|pare-brise|accident|accroch\w*|"
                      r"collision|tempete|grele|degats?|dommages?|endommage\w*|expert(?:ise)?|constat|"
                     r"feu|pompiers|fumee|"
                      r"leak|flood\w*|fire|burglary|theft|stolen|windscreen|storm|hail|damaged?|loss adjuster)\b"),
    ("sinistre", 1.0, r"\b(?:vol|vole|volee|indemnis\w*|franchise|sin-\d+|reparation|repare\w*|couvreur|plombier)\b"),
    ("reclamation", 3.0, r"\b(?:reclamation|contest\w*|plainte|mecontent\w*|litige|mediat\w*|inadmissible|"
                         r"inacceptable|scandal\w*|insatisf\w*|complain\w*|complaint|dispute\w*|unacceptable)\b"),
    ("reclamation", 2.0, r"\bpas normal\b|\btoujours pas\b|\bpas d'accord\b|\bune erreur\b|\bpar erreur\b|"
                         r"\ba tort\b|\bdeux fois\b|\bstill (?:not|no)\b|\bby mistake\b|\btwice\b|\brelanc\w*|"
                         r"\bmenace\w*|\bthreaten\w*|\bpenible\b|\bras le bol\b|\bmarre\b|\bhonte\b"),
    ("adresse", 3.0, r"\b(?:demenag\w*|emmenag\w*|adresse(?! (?:e-?mail|mail|electronique|courriel))|domicil\w*|"
                     r"moved|relocat\w*|address)\b|<address_\d+>"),
    ("adresse", 2.0, r"\b(?:habite\w*|reside\w*|installee? a|code postal|lives? in|living in)\b"),
    ("preference", 3.0, r"\b(?:prefer\w*|plutot que|jamais (?:de|par|avant|apres|le)|ne (?:veut|souhaite) (?:pas|plus)|"
                        r"uniquement par|seulement par|rather|never (?:by|before|after))\b"),
    ("preference", 1.5, r"\b(?:souhaite|voudrait|aimerait|ne repond (?:jamais|pas)|wants|would like)\b"),
    # consent to marketing, and its withdrawal: how the member may be approached is a preference
    ("preference", 3.0, r"\b(?:demarchage|prospection|sollicit\w*|publicit\w*|promotion\w*|newsletters?|mailings?|"
                        r"(?:offres?|appels?|sms|e-?mails?|courriers?|propositions?) (?:commerciales?|commerciaux|"
                        r"promotionnel\w*|publicitaires?)|offres? (?:des|de nos) partenaires|marketing|"
                        r"consentement|(?:retire\w*|revoque\w*|donne\w*) (?:son|votre|leur|mon|l') ?accord|"
                        r"opt[- ]?out|unsubscrib\w*|marketing consent)\b"),
    ("contact", 2.5, r"\b(?:e-?mails?|courriels?|courriers?|telephone|portable|sms|textos?|joindre|joignable|"
                     r"injoignable|rappel\w*|recontact\w*|contacte\w*|phone|call(?:ed)? back|reach|unreachable|"
                     r"adresse (?:e-?mail|mail|electronique|courriel)|(?:numero|telephone|ligne) fixe|mobile)\b|"
                     r"<email_\d+>|<phone_\d+>"),
    ("contact", 1.0, r"\b(?:disponible|horaires?|matin|soir|apres-midi|avant \d+ ?h|apres \d+ ?h|morning|evening)\b"),
    ("contrat", 3.0, r"\b(?:contrats?|souscri\w*|resili\w*|avenant|mrh|multirisque|police|formule|ctr-\d+|"
                     r"adherent|adhesion|societaire|contract|policy|subscri\w*|cancel\w*)\b"),
    ("contrat", 2.0, r"\b(?:client\w* depuis|chez nous depuis|"
                     r"assurance|assure\w*|garanties?|option|couverture|habitation|auto|automobile|sante|"
                     r"mutuelle|prevoyance|pret|credit|emprunt|livret|epargne|compte|devis|tarif|insurance|"
                     r"cover(?:age)?|loan|mortgage|savings|account|quote)\b"),
    ("contrat", 1.5, r"\b(?:voitures?|vehicules?|motos?|scooters?|maison|appartement|logement|piscine|garage|alarme|"
                     r"roule\w*|(?:the|a|my|their|his|her) cars?|vehicle|house|flat|home)\b"),
    ("contrat", 1.0, r"\b(?:carte|card|offre|produit|plan)\b"),
    ("paiement", 3.0, r"\b(?:prelev\w*|impaye\w*|decouvert|virements?|cheques?|iban|rib|echeances?|"
                      r"mensualites?|"
                      r"direct debit|payments?|refund\w*|overdue|unpaid)\b|<iban_\d+>|<card_\d+>"),
    # "opposition" is a payment word unless it is the member's opposition to being solicited or
    # recorded ("note votre opposition au démarchage", "l'opposition du membre")
    ("paiement", 3.0, r"\b(?:(?:faire|fait|faite|mettre|mis|mise|en) opposition|opposition (?:sur|a|au|aux|de) "
                      r"(?:la |sa |votre |ma |une |le |son |mon |ses |des |les )?(?:cartes?|cheques?|prelev\w*|"
                      r"paiements?|virements?|chequier))\b"),
    ("preference", 3.0, r"\b(?:(?:votre|son|mon|leur|l') ?opposition(?! (?:sur|a|au|aux|de) (?:la |sa |votre |une |le |"
                        r"son |ses |des |les )?(?:cartes?|cheques?|prelev|paiements?|virements?|chequier))|"
                        r"opposition (?:a tout|au demarchage|a la prospection|a l'enregistrement|"
                        r"aux (?:appels|offres|sollicitations)))\b"),
    ("paiement", 2.0, r"\b(?:paiement|payer|paye\w*|regle\w*|cotisations?|primes?|factures?|rembours\w*|versements?|"
                      r"carte bancaire|carte bleue|montant|retard|premiums?|invoices?|bills?|paid|pay)\b"),
    ("famille", 3.0, r"\b(?:marie\w*|mariage|pacs\w*|divorc\w*|separe\w*|"
                     r"(?<!date de )naissance|bebe|enceinte|deced\w*|deces|"
                     r"veu(?:f|ve)|conge (?:maternite|paternite|parental)|married|divorce\w*|baby|pregnan\w*|"
                     r"passed away|widow\w*)\b"),
    ("famille", 2.0, r"\b(?:enfants?|fils|filles?|epoux|epouse|conjointe?|mari|femme|compagne?|compagnon|parents?|"
                     r"retraite\w*|chomage|emploi|travaille\w*|metier|profession|infirmier\w*|etudiant\w*|"
                     r"cdi|cdd|interim\w*|salaire|salarie\w*|embauche\w*|licencie\w*|france travail|pole emploi|"
                     r"arret (?:de travail|maladie)|revenus?|gagne\w*|euros? (?:net|brut)s?|"
                     r"horaires decales|children|kids?|(?:his|her|their|my|a) sons?|daughters?|wife|husband|partner|"
                     r"retired|job|works?)\b"),
    ("projet", 3.0, r"\b(?:budget|projet|financ\w*|apport|envisage\w*|achat|acheter|project|purchase|buy)\b"),
    ("projet", 1.5, r"\b(?:souhaite (?:acheter|financer|souscrire)|compte (?:acheter|faire)|planning)\b"),
)

# An outcome announced, whoever says it ("le dossier est accepté", "320 € ont été remboursés").
_OUTCOME = re.compile(
    r"\b(?:sera (?:verse|rembourse|effectue|envoye|traite|cloture|resilie|pris en charge)e?s?|"
    r"(?:a|ont) ete (?:verse|rembourse|effectue|envoye|accepte|valide|refuse|cloture|resilie|enregistre|ouvert|"
    r"transmis|annule|pris en charge)e?s?|est (?:accepte|valide|refuse|cloture|enregistre|ouvert|pris en charge|"
    r"resilie|annule|reporte|fixe|programme|decale|confirme|planifie)e?|prise en charge|geste commercial|"
    r"accordee?s?|reporte au|decale au|rendez-vous (?:fixe|pris|programme|confirme)|"
    r"(?:versement|virement|paiement|remboursement|cheque|indemnisation)s?\b[^.;]{0,40}\b(?:est|sont) partie?s?|"
    r"has been (?:refunded|paid|sent|approved|accepted|"
    r"rejected|closed|opened|updated|cancell?ed)|was (?:approved|rejected|refunded))\b"
)
# The advisor commits to something or does it during the call ("je vous envoie…", "un expert
# passera…", "nous avons procédé au remboursement").
_COMMITMENT = re.compile(
    r"\b(?:envoie|enverr\w*|envoy\w*|transmet\w*|transmis|passera|viendra|interviendra|contactera|rappel\w*|"
    r"recontact\w*|revien\w* vers|procede|rembourse\w*|versera|verse|ouvre|ouvert|resilie\w*|inscri\w*|annule\w*|"
    r"reserve\w*|met|mets|"
    r"enregistre\w*|met a jour|mis a jour|modifie\w*|accorde\w*|valide\w*|programme\w*|planifie\w*|"
    r"rendez-vous|fait parvenir|fai\w* opposition|bloque\w*|debloque\w*|suspend\w*|reactiv\w*|commande\w*|"
    r"report\w*|decale\w*|offert|offre|applique\w*|will (?:send|call|visit|refund|contact|update|transfer|pay|cancel)|"
    r"(?:have|has) (?:refunded|sent|updated|cancell?ed|opened|booked)|refunded|approved|scheduled|booked)\b"
)
# The advisor changes what the file holds, in the first person (or as rewritten), with the general verbs of
# change that the supersession judge reads as cues (``reconcile.evidence``): "je remplace la Peugeot par la
# Skoda", "je supprime les deux virements", "je retire", "j'ajoute", "je corrige". Replacing or changing names
# what comes instead ("par", "pour"): "je remplace votre ancien numéro" after the member gave the new one only
# confirms it, and as a fact of its own it closed the member's new number. A decision when no keyword files
# it elsewhere ("je retire votre accord pour les offres" stays a preference).
_CHANGES = re.compile(r"\b(?:je |j'|on |nous |le conseiller )(?:(?:vous|lui|leur|le|la|les|en|y) |l')*"
                      r"(?:(?:remplac|chang)\w*\b[^.;]*\b(?:par|pour)\b|(?:supprim|retir|ajout|corrig)\w*)")


def category(text: str, *, advisor: bool) -> str:
    """The fact's category: an advisor's commitment is a decision; else the heaviest keywords."""
    folded = fold(text)
    if advisor and (_COMMITMENT.search(folded) or _OUTCOME.search(folded)):
        return "decision"
    scores = keyword_scores(folded)
    if _OUTCOME.search(folded):
        scores["decision"] = scores.get("decision", 0.0) + 2.5
    if not scores:
        return "decision" if advisor and _CHANGES.search(folded) else "autre"
    if scores.get("preference", 0.0) >= 3.0 and "contact" in scores:
        return "preference"  # "préfère être rappelé le matin": how to reach them is a preference
    return max(CATEGORIES, key=lambda c: (scores.get(c, 0.0), -CATEGORIES.index(c)))


def keyword_scores(folded: str) -> dict[str, float]:
    scores: dict[str, float] = {}
    for cat, weight, pattern in _KEYWORDS:
        if pattern.search(folded):
            scores[cat] = scores.get(cat, 0.0) + weight
    return scores


def is_decision(text: str, *, advisor: bool) -> bool:
    folded = fold(text)
    return _OUTCOME.search(folded) is not None or (
        advisor and (_COMMITMENT.search(folded) is not None or _CHANGES.search(folded) is not None))


def importance(cat: str, text: str = "") -> float:
    """The category's importance; a profile fact (how to reach and treat the person,
    :mod:`carnet.domain.profile`) is worth a decision's, whatever its category."""
    base = IMPORTANCE.get(cat, IMPORTANCE["autre"])
    return max(base, PROFILE_IMPORTANCE) if text and is_profile(text) else base
