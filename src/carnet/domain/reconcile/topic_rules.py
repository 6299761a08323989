"""The topic table: what a member's file keeps one current value of, and the kinds of file a note names.

It says what a note is *about*: a handful of attributes that a call-center file of an insurer or a bank holds one
value of at a time (where the member lives, their mobile, their premium, their consent to
marketing…), each recognised by the general words of the trade, in French and English. It no longer
decides supersession (the learned judge does, ``judge_model``; its ``same_topic`` and ``other_topics``
evidence reads the ``exclusive`` rows): ``topics.keyword_text`` adds a note's attribute names to what the
keyword retriever indexes, and ``topics.file_kinds`` finds the kind of file a note names. The cues of a
change, an addition, an event, a withdrawal, a plan and a quote that the hand-written supersession rules
read went with those rules (2026-12-07: nothing read them since the judge replaced the rules).
Patterns run on ``text.fold`` output (lower case, no accents). Measured leave-one-writer-out with the query
lexicon (docs/benchmarks.md): without both, recall@3 from facts 0.786 → 0.757.

The words are the vocabulary of the domain, not of any example: "adresse", "habite", "réside" for a
residence; "cotisation", "prime" for a premium. A row is one attribute; adding one is adding a row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from carnet.domain.pii.patterns import POSTAL_ADDRESS

Pattern = re.Pattern[str]


def _c(pattern: str) -> Pattern:
    return re.compile(pattern)


@dataclass(frozen=True, slots=True)
class Topic:
    name: str
    cue: Pattern  # the note is about this attribute
    exclusive: bool = True  # one value at a time (the judge's ``same_topic``); else several (cars)
    needs: Pattern | None = None  # and the note must also contain this (a phone needs a number)
    named: bool = False  # its value is a name (a plan): a note about it names one, and only names count
    # The words after which a note names its value ("le contrat Sérénité Duo", "formule Propriétaire"),
    # read on the note as written: such a note is about the attribute, and those names are its value.
    name_after: Pattern | None = None
    # The shape of its value alone says what the note is about (a postal address is where someone lives),
    # read on the note as written, unless the note places it elsewhere (``ELSEWHERE``: a garage's address).
    shape: Pattern | None = None
    # What advisors call it (French, English): added to a note's keyword terms (``topics.keyword_terms``),
    # so "Adresse ?" finds "À compter du 1er juillet, <ADDRESS_1>." by its keywords too.
    words: tuple[str, str] = ("", "")


CHANNELS: tuple[tuple[str, Pattern], ...] = (
    ("sms", _c(r"\b(?:sms|texto?s?|text messages?)\b")),
    ("email", _c(r"\b(?:e-?mails?|mails?|courriels?|electroniques?)\b")),
    ("phone", _c(r"\b(?:telephone|telephonique|appels?|phone|calls?)\b")),
    ("post", _c(r"\b(?:courrier postal|poste|postal|papier|letters?|post)\b")),
)

# Car makes, and models named without their make ("la Clio"): what a note about the insured vehicle names it by
# (the French market's common makes and models: general knowledge of the trade, not from any example).
_MAKES = (
    "peugeot|renault|citroen|dacia|tesla|toyota|volkswagen|vw|ford|kia|hyundai|bmw|mercedes(?:-benz)?|audi|fiat|"
    "opel|nissan|skoda|volvo|mazda|honda|suzuki|yamaha|kawasaki|ducati|triumph|vespa|piaggio|porsche|jeep|byd|"
    "cupra|lexus|land rover|alfa romeo|clio|megane|captur|twingo|zoe|scenic|kangoo|austral|sandero|duster|spring|"
    "yaris|corolla|rav4|c-hr|golf|polo|tiguan|passat|focus|fiesta|puma|kuga|niro|sportage|picanto|qashqai|juke|"
    "micra|octavia|fabia|c3|c4|berlingo"
)
_PHONE = r"(?:\+\d{2}\s?|\b0)[1-9](?:[ .-]?\d{2}){4}\b|<[a-z_]*phone[a-z_]*_\d+>"
_AMOUNT = r"\d(?:[\d .,]*\d)?\s*(?:€|eur\b|euros?\b)"
# A postal address as written, or its placeholder once pseudonymised (notes are read both ways).
_ADDRESS = _c(rf"{POSTAL_ADDRESS.pattern}|<ADDRESS(?:_\d+)?>")

TOPICS: tuple[Topic, ...] = (
    Topic("residence", _c(
        r"\b(?:adresse(?! (?:e-?mail|mail|electronique|courriel))|habite\w*|vit (?:a|au|aux|dans|chez|en|seule?)|"
        # "résilié pour déménagement": a move named as the cause of something else says no address
        r"reside\w*|residence principale|domicil\w*|(?<!pour )(?<!cause de )(?<!suite au )(?<!suite a son )"
        r"(?<!raison de son )demenag\w*|emmenag\w*|lives? (?:in|at)|living in|"
        r"address|moved to|relocated)\b"), shape=_ADDRESS,
          words=("adresse domicile", "address home")),
    Topic("phone", _c(r"\b(?:portable|mobile|telephone|tel|fixe|joignable|phone|cell)\b"),
          needs=_c(_PHONE), words=("téléphone", "phone")),
    Topic("email", _c(r"\b(?:e-?mail|courriel|adresse (?:mail|electronique)|mail)\b"),
          needs=_c(r"@|<[a-z_]*email[a-z_]*_\d+>"), words=("e-mail", "email")),
    Topic("documents", _c(r"\b(?:documents?|courriers?|correspondances?|releves?|avis d'echeance|statements?)\b"),
          needs=_c(r"\b(?:courrier postal|par (?:la )?poste|postal|par e-?mail|par mail|par courriel|electronique|"
                   r"dematerialis\w*|espace (?:client|adherent|personnel)|papier|by (?:post|e-?mail)|paperless)\b"),
          words=("envoi des documents", "documents sent")),
    Topic("marketing", _c(
        r"\b(?:offres? commerciales?|offres? (?:des|de nos) partenaires|offres? promotionnelles?|promotion\w*|"
        r"prospection|demarchage|sollicitations? commerciales?|(?:sms|e-?mails?|appels?|courriers?) commerciaux|"
        r"publicit\w*|marketing|newsletters?|offres? de la (?:banque|mutuelle)|promotional|offers)\b"),
          words=("démarchage commercial", "marketing")),
    Topic("employment", _c(
        r"\b(?:sans emploi|emploi|cdi|cdd|chomage|interim\w*|france travail|pole emploi|licencie\w*|embauche\w*|"
        r"salarie\w*|travaille (?:chez|comme|pour|a|dans)|retraite\w*|demandeur d'emploi|en poste|unemployed|"
        r"employed|works (?:at|for|as)|retired)\b"), words=("emploi", "employment")),
    Topic("income", _c(r"\b(?:salaire|revenus?|gagne|remuneration|salary|income|earns)\b|"
                       r"\d\s*(?:€|euros?)\s+(?:nets?|bruts?)\b"),
          words=("revenus", "income")),
    Topic("sick_leave", _c(r"\b(?:arrets? (?:de travail|maladie|prolonge\w*|prescrit\w*)|"
                           r"arret\w*(?: [\w']+){0,2} jusqu|prolongation d'arret|"
                           r"sick leave)\b|\bprolongation\b(?=.*\barret)"),
          words=("arrêt de travail", "sick leave")),
    Topic("card_limit", _c(r"\b(?:plafonds?|limite de (?:paiement|retrait)|card limit|spending limit)\b"),
          needs=_c(r"\b(?:cartes?|cards?)\b"),
          words=("plafond de carte", "card limit")),
    Topic("standing_order", _c(r"\b(?:virements? (?:permanents?|mensuels?|automatiques?|recurrents?)|"
                                 r"ordres? permanents?|standing orders?|recurring transfers?)\b"),
          words=("virement permanent", "standing order")),
    Topic("loan_insurance", _c(r"\b(?:assurance (?:emprunteur|de pret|du pret|credit)|loan insurance|"
                               r"(?:delegation|substitution) (?:d'assurance|chez|aupres)|insurance delegation)\b"),
          words=("assurance emprunteur", "loan insurance")),
    Topic("premium", _c(r"\b(?:cotisations?|primes? (?:annuelles?|mensuelles?|d'assurance)?|premium)\b|"
                        r"\b(?:paie|paient|payez|payons|pays|paying)\b"
                        r"(?=.*\b(?:par|per|a) (?:mois|an|annee|month|year)\b)"),
          needs=_c(_AMOUNT),
          words=("cotisation", "premium")),
    Topic("plan", _c(r"\b(?:formules?|niveau de (?:garantie|couverture)|coverage level|tier)\b"),
          named=True, words=("formule", "plan"),
          name_after=_c(r"\b(?:[Cc]ontrats?|[Ff]ormules?|[Gg]ammes?|[Oo]ffres?|[Pp]lan|[Pp]ackage)\s+"
                        r"((?:[A-ZÀ-ÖØ-Þ][\w'’-]*\s*){1,4})")),
    Topic("down_payment", _c(r"\b(?:apport(?: personnel)?|down payment)\b"),
          words=("apport", "down payment")),
    Topic("budget", _c(r"\bbudget\b"), words=("budget", "budget")),
    Topic("vehicle", _c(rf"\b(?:vehicule|voiture|immatricul\w*|vehicle|{_MAKES})\b"), exclusive=False,
          words=("véhicule assuré", "insured vehicle")),
)

# The lines of business a contract belongs to, each by its French and English names: the branches of the Code
# des assurances (art. R321-1: land vehicles, fire and property, sickness, life, legal protection…) as a call
# center names them, the regulated savings products of the Code monétaire et financier (livret A, LDDS,
# LEP, PEL, PEA, PER) and the kinds of credit. Two notes that each name a line, none in common, are about two
# contracts: "Contrat auto : prime de 60 euros" says nothing of "Contrat habitation : prime de 25 euros"
# (``evidence``), nor "Prêt auto : 8 000 euros restant dus" of "Prêt immobilier : 150 000 euros restant dus".
CONTRACT_LINES: tuple[tuple[str, Pattern], ...] = (
    ("auto", _c(r"\b(?:auto(?![-\w])|automobile|assurance (?:de (?:la |sa )?)?voiture|tous risques|au tiers"
                r"|car insurance)\b")),
    ("moto", _c(r"\b(?:moto|motos|deux-roues|scooter|motorbike)\b")),
    ("habitation", _c(r"\b(?:habitation|mrh|multirisques? habitation|assurance (?:du |de son )?logement"
                      r"|proprietaire non occupant|pno|home insurance)\b")),
    ("sante", _c(r"\b(?:(?:contrat|complementaire|mutuelle|assurance|couverture|garanties?|option|formule) sante"
                 r"|health insurance)\b")),
    ("prevoyance", _c(r"\b(?:prevoyance|income protection)\b")),
    ("emprunteur", _c(r"\b(?:emprunteur|assurance (?:de |du )?pret|assurance credit|loan insurance)\b")),
    ("vie", _c(r"\b(?:assurance[- ]vie|life insurance)\b")),
    ("obseques", _c(r"\b(?:obseques|funeral)\b")),
    ("gav", _c(r"\b(?:garantie des accidents de la vie|gav)\b")),
    ("protection juridique", _c(r"\b(?:protection juridique|legal protection)\b")),
    ("livret", _c(r"\b(?:livret a|livret jeune|ldds|lep|livret d'epargne)\b")),
    ("pel", _c(r"\b(?:pel|cel|plan d'epargne logement)\b")),
    ("pea", _c(r"\b(?:pea|plan d'epargne en actions)\b")),
    ("per", _c(r"\b(?:per|plan d'epargne retraite)\b")),
    # the two kinds of credit of the Code de la consommation (art. L313-1 real estate, L312-1 consumer credit)
    ("immobilier", _c(r"\b(?:pret immo\w*|credit immo\w*|pret (?:a l')?habitat|pret relais|mortgage)\b")),
    ("consommation", _c(r"\b(?:pret personnel|credit (?:a la )?conso\w*|credit renouvelable|pret etudiant"
                        r"|pret travaux|personal loan)\b")),
)  # fmt: skip

# Places that are not where the member lives, whose address a note may give ("le garage du 12 rue…").
ELSEWHERE = _c(
    r"\b(?:garages?|carrosserie|concession\w*|agences?|cabinets?|experts?|expertise|hopital|clinique|bureaux?|"
    r"magasins?|boutiques?|entreprises?|societe|employeur|usine|entrepot|ecoles?|college|lycee|creche|mairie|"
    r"notaire|banque|pharmacie|centre|siege|atelier|chantier|office|shop|workshop|hospital|school)\b"
)

# --- case files: a reference's status is a state, its opening an event ------------------------

# A status of a claim, complaint or file ("en attente d'expertise", "clos", "déclaré recevable").
CASE_STATUS = _c(
    r"\b(?:en attente|en cours|instruction|expert(?:ise)?s?|clos|close|clotur\w*|regle|reglee|solde|soldee|recevable|"
    r"irrecevable|adopte|adoptee|accepte|acceptee|refuse|refusee|rejete\w*|valide|validee|suspendu\w*|ouvert|"
    r"ouverte|en traitement|classe sans suite|abouti|accorde\w*|pending|in progress|closed|settled|accepted|"
    r"rejected|approved|under review)\b"
    # waiting for a document: "il faudra l'acte de décès", "il manque le justificatif"
    r"|\bil (?:faudra|faut|manque) (?:\S+ ){0,2}(?:[ld]')?(?:actes?|justificatifs?|certificats?|attestations?|pieces?|"
    r"documents?|avis|rapports?|factures?|releves?)\b"
)
# A note about a file: its references are the file's, and so are its amounts.
CASE_NOUNS = _c(r"\b(?:dossiers?|sinistres?|reclamations?|plaintes?|litiges?|contestations?|declar\w*|claims?|"
                r"complaints?|tickets?|files?)\b")
# What a file is about, for a note that names a file but not its reference ("au sujet de votre dossier
# grêle"): the kinds of claims and procedures a call center opens files for, each by its French name.
CASE_KINDS: tuple[tuple[str, Pattern], ...] = (
    ("incendie", _c(r"\b(?:incendies?|feu|fire)\b")),
    ("dégât des eaux", _c(r"\b(?:degats? des eaux|fuites?|inondations?|infiltrations?|water damage|flood\w*|"
                          r"leak\w*)\b")),
    ("grêle", _c(r"\b(?:grele|hail\w*)\b")),
    ("tempête", _c(r"\b(?:tempetes?|orages?|storms?)\b")),
    ("vol", _c(r"\b(?:vol|vols|cambriolages?|effraction|theft|burglary)\b")),
    ("bris de glace", _c(r"\b(?:bris de glace|pare-brise|windscreen|windshield)\b")),
    ("accident", _c(r"\b(?:accidents?|collisions?|accrochages?|crash)\b")),
    ("décès", _c(r"\b(?:deces|allocation obseques|death)\b")),
    ("surendettement", _c(r"\b(?:surendettement|over-?indebtedness)\b")),
    ("arrêt de travail", _c(r"\b(?:arrets? (?:de travail|maladie)|indemnites journalieres|sick leave)\b")),
    ("réclamation", _c(r"\b(?:reclamations?|contestations?|complaints?)\b")),
)  # fmt: skip
