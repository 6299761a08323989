"""The slot table: French and English patterns that read (slot, value) out of a member fact.

Declarative on purpose: a reviewer reads one entry per slot, and adding a slot is adding a
row. Patterns run on ``text.fold`` output (casefolded, accents removed, one apostrophe), so
they are written without accents. Each pattern has a group ``v``: the value. The value's
canonical form is computed by ``carnet.domain.reconcile.slots`` according to ``ValueKind``.

Slots cover what call-center notes of insurers and banks keep restating: where the member
lives, budgets and amounts, contact preferences, family, employer, vehicles, contracts and
their options, claims, payment means, bank details, appointments.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

Pattern = re.Pattern[str]


class ValueKind(StrEnum):
    NUMBER = "number"  # amounts, counts, coefficients: compared as canonical numbers
    DATE = "date"  # day-month, from "12 avril" or "12/04"
    CODE = "code"  # phone, email, IBAN: compact, exact
    ENUM = "enum"  # a closed set of values (marital status, payment means…)
    NAME = "name"  # free words: places, employers, vehicles (compared as word sets)


@dataclass(frozen=True, slots=True)
class SlotRule:
    slot: str
    patterns: tuple[Pattern, ...]
    kind: ValueKind
    exclusive: bool = True  # one value at a time (an address) vs several (cars)
    polar: bool = False  # negation before the value flips it ("ne travaille plus chez…")
    per_person: bool = True  # "son épouse travaille chez…" is the spouse's fact, not the member's
    negative_patterns: tuple[Pattern, ...] = ()  # patterns that always state a negative ("a quitté X")
    negative_words: Pattern | None = None  # extra negative cues for this slot ("vendu", "annulé")
    negative_in_text: bool = False  # look for negative_words in the whole note, not just the clause
    context: Pattern | None = None  # the note must contain this for the rule to apply
    prefix_requires: Pattern | None = None  # the clause before the value must contain this
    boundary: Pattern | None = None  # clause boundaries for this slot (default: ``BOUNDARY``)
    qualify: Callable[[str, int], str] | None = None  # (folded note, value start) -> qualifier
    enum: tuple[tuple[Pattern, str], ...] | None = None  # raw value -> canonical value
    canonical: Callable[[tuple[str, ...]], tuple[str, ...]] | None = None
    max_words: int = 8
    wildcard: bool = True  # an unqualified value ("*") matches any qualifier; False: only "*"


RAW = ""  # enum value meaning "keep the matched words as they are"

# Words that frame a fact without adding one ("assurance voiture en formule tiers" restates
# "contrat auto au tiers"): a merge may drop them from the new note's wording.
FRAME_WORDS = frozenset(
    str.split(
        """
        assurance assurances contrat contrats formule police garantie auto automobile voiture vehicule
        habitation logement cotisation cotisations prime paiement reglement payment premium insurance
        policy client cliente numero number adresse address souhaite prefere preferes prefers likes wants
        veut voudrait aime actuellement currently toujours still
        """
    )
)


def _c(pattern: str) -> Pattern:
    return re.compile(pattern)


def _enum(*pairs: tuple[str, str]) -> tuple[tuple[Pattern, str], ...]:
    return tuple((_c(p), v) for p, v in pairs)


# --- shared cues -------------------------------------------------------------------------------

BOUNDARY = _c(r"[,;:.!?()]|\b(?:mais|but|puis|then|et|and|donc|so|car|because|whereas|alors que)\b")

NEGATION = _c(
    r"\bn(?:e\s|')|\b(?:pas|plus|jamais|aucune?|non|sans|no longer|not|never|without|refuse\w*|refus|"
    r"opposition|s'oppose\w*|objects? to|"
    r"indisponible|unavailable|doesn't|don't|isn't|won't|hasn't|haven't)\b|n't\b"
)

# The note says something changed: the contradiction band needs one, and so does a
# multi-valued slot (a second car is not a contradiction; "a remplacé sa Clio" is).
CHANGE_MARKERS = _c(
    r"\b(?:maintenant|desormais|dorenavant|a present|depuis peu|finalement|"
    r"n(?:e\s+|')(?:[\w']+\s+){0,2}plus|a change|change de|changement de|demenage|quitte|"
    r"remplace\w*|passee?s? (?:a|au|en|de|sur)|est passee?|devenue?s?|resilie\w*|resiliation|"
    r"reporte\w*|decale\w*|deplace\w*|annule\w*|mis a jour|modifie\w*|au lieu de|plutot que|vendu|"
    r"arrete de|now|no longer|not anymore|anymore|moved|relocated|changed|switched|replaced|"
    r"instead|rescheduled|postponed|cancell?ed|sold|quit|became|has become|updated)\b"
)

HOLDER = _c(
    r"^\W*(?:son|sa|ses|leur|leurs|le|la|les|l'|his|her|their|the)\s*(?:[\w']+\s+)?(?P<h>"
    r"epouse|mari|conjointe?|femme|compagne|compagnon|fiancee?|fils|filles?|peres?|meres?|freres?|soeurs?|"
    r"enfants?|parents?|grands?-parents|grand-mere|grand-pere|beaux?-parents|belle-mere|beau-pere|"
    r"oncle|tante|cousine?|neveu|niece|amie?|voisine?|collegue|"
    r"wife|husband|partner|spouse|fiance|sons?|daughters?|father|mother|brothers?|sisters?|children|kids?|"
    r"child|parents?|grandparents|grandmother|grandfather|uncle|aunt|cousin|nephew|niece|friend|"
    r"neighbou?r|colleague|in-laws)\b"
)
# Anyone but the member: the fact is theirs. Unlisted relatives keep their own word as holder.
HOLDERS = {
    **dict.fromkeys(
        ("epouse", "mari", "conjoint", "conjointe", "femme", "compagne", "compagnon", "wife", "husband",
         "partner", "spouse"), "spouse"),
    **dict.fromkeys(("fils", "son"), "son"),
    **dict.fromkeys(("fille", "daughter"), "daughter"),
    **dict.fromkeys(("pere", "father"), "father"),
    **dict.fromkeys(("mere", "mother"), "mother"),
    **dict.fromkeys(("frere", "brother"), "brother"),
    **dict.fromkeys(("soeur", "sister"), "sister"),
}  # fmt: skip

# --- qualifiers ------------------------------------------------------------------------------


def _first_label(labels: tuple[tuple[Pattern, str], ...], folded: str, start: int) -> str:
    """The label nearest after ``start`` (the value's own clause), else the first in the note."""
    after = [(m.start(), label) for p, label in labels if (m := p.search(folded, start))]
    if after:
        return min(after)[1]
    anywhere = [(m.start(), label) for p, label in labels if (m := p.search(folded))]
    return min(anywhere)[1] if anywhere else "*"


_PRODUCTS = _enum(
    (r"\b(?:moto|scooter|motorcycle|motorbike)\b", "moto"),
    (r"\b(?:auto|automobile|voiture|vehicule|motor|(?:the|a|his|her|their|my|new|per|for) cars?)\b", "auto"),
    (r"\b(?:habitation|logement|maison|appartement|mrh|home|house|household|contents)\b", "home"),
    (r"\b(?:sante|mutuelle|complementaire|health|medical)\b", "health"),
    (r"\b(?:emprunteur|pret|immobilier|loan|mortgage|credit(?! agricole| mutuel| lyonnais| du nord))\b", "loan"),
    (r"\b(?:velo|bike|bicycle)\b", "bike"),
    (r"\b(?:scolaire|school)\b", "school"),
    (r"\b(?:prevoyance|assurance vie|life insurance)\b", "life"),
    (r"\b(?:options?|add-ons?|riders?)\b", "option"),  # an option's premium is not the contract's
)


def product(folded: str, start: int) -> str:
    return _first_label(_PRODUCTS, folded, start)


_CLAIM_TYPES = _enum(
    (r"\b(?:degats? des eaux|fuite|water damage|leak)\b", "water"),
    (r"\b(?:bris de glace|pare-brise|windscreen|windshield|glass)\b", "glass"),
    (r"\b(?:vol|cambriolage|theft|stolen|burglary)\b", "theft"),
    (r"\b(?:incendie|fire)\b", "fire"),
    (r"\b(?:grele|tempete|hail|storm)\b", "weather"),
    (r"\b(?:accident|collision|accrochage|crash)\b", "accident"),
)


def claim_type(folded: str, start: int) -> str:
    return _first_label(_CLAIM_TYPES, folded, 0)


_WITH_WHOM = _enum(
    (r"\b(?:expert|experte|loss adjuster|assessor)\b", "expert"),
    (r"\b(?:agence|branch|agency)\b", "branch"),
    (r"\b(?:conseill\w*|advis[eo]r|adviser)\b", "advisor"),
    (r"\b(?:garage|carross\w*|body shop|reparateur)\b", "garage"),
    (r"\b(?:medecin|docteur|doctor|medical)\b", "doctor"),
    (r"\b(?:notaire|notary)\b", "notary"),
)


def with_whom(folded: str, start: int) -> str:
    return _first_label(_WITH_WHOM, folded, 0)


_ACCOUNTS = _enum(
    (r"\b(?:courant|current|cheques?|checking)\b", "current"),
    (r"\b(?:livrets?|epargne|savings|pel|assurance vie)\b", "savings"),
    (r"\b(?:pret|emprunt|loan|mortgage)\b", "loan"),
)


def account(folded: str, start: int) -> str:
    return _first_label(_ACCOUNTS, folded, 0)


def phone_line(folded: str, start: int) -> str:
    digits = re.sub(r"\D", "", folded[start : start + 20])
    national = "0" + digits[2:] if digits.startswith("33") else digits
    return "mobile" if national[:2] in ("06", "07") else "landline"


_EMAIL_USES = _enum(
    (r"\b(?:professionnel\w*|pro|travail|bureau|work|business|office)\b", "work"),
    (r"\b(?:personnel\w*|perso|personal|private|privee?)\b", "personal"),
)


def email_use(folded: str, start: int) -> str:
    return _first_label(_EMAIL_USES, folded, 0)


_PURPOSES = _enum(
    (r"\b(?:releves?|documents?|statements?|factures?|avis d'echeance|attestations?|invoices?)\b", "documents"),
    (r"\b(?:offres?|prospection|commercia\w*|marketing|newsletters?|promotions?|publicit\w*)\b", "marketing"),
)


def purpose(folded: str, start: int) -> str:
    label = _first_label(_PURPOSES, folded, 0)
    return "contact" if label == "*" else label


# --- value fragments -------------------------------------------------------------------------

_ADV = (
    r"(?:\s+(?:maintenant|desormais|dorenavant|actuellement|toujours|aujourd'hui|a present|depuis peu|"
    r"finalement|plutot|bien|plus|pas|jamais|encore|now|currently|still|recently|actually|also|aussi|"
    r"no longer|not|never|only|uniquement))*"
)
_NUM = r"(?:[1-9]\d{0,2}(?: \d{3})+(?![\d.,])|[1-9]\d{0,2}(?:\.\d{3})+(?![\d,])|\d+(?:[.,]\d+)?)"
_AMOUNT = rf"(?P<v>[€$£] ?{_NUM}(?: ?k)?|{_NUM}(?: ?k)?(?: ?(?:€|eur|euros?|\$|usd|dollars?|£|gbp)(?![a-z]))?)"
_END = r"(?=\s*[,;:.()!?]|\s*$|\s+(?:depuis|avec|ensemble|together|pour|et|mais|car|parce|since|with|for|and|but"
_END_PLACE = _END + r"|because|last|this|next|il|elle|he|she|ou|where|when|quand)\b)"
_END_NAME = _END + r"|because|a|au|aux|en|dans|sur|in|at|on|as|comme|il|elle|he|she|last|this|next|ou|where)\b)"
_PLACE = r"(?P<v>(?!couple\b|union\b|concubinage\b)[^,;:.()!?]+?)"
_NAME = r"(?P<v>[^,;:.()!?]+?)"
_MONTHS = (
    r"janvier|fevrier|mars|avril|mai|juin|juillet|aout|septembre|octobre|novembre|decembre|"
    r"january|february|march|april|may|june|july|august|september|october|november|december"
)

# --- vehicles --------------------------------------------------------------------------------

_BRANDS = (
    r"peugeot|renault|citroen|dacia|tesla|toyota|volkswagen|vw|ford|kia|hyundai|bmw|mercedes(?:-benz)?|"
    r"audi|fiat|opel|nissan|skoda|volvo|mazda|honda|suzuki|yamaha|kawasaki|ducati|triumph|vespa|"
    r"piaggio|porsche|jeep|byd|cupra|lexus|land rover|alfa romeo"
)
_MODEL_BRAND = {
    **dict.fromkeys(("clio", "megane", "captur", "twingo", "zoe", "scenic", "kangoo", "austral"), "renault"),
    **dict.fromkeys(("sandero", "duster", "spring"), "dacia"),
    **dict.fromkeys(("yaris", "corolla", "rav4", "c-hr"), "toyota"),
    **dict.fromkeys(("golf", "polo", "tiguan", "passat"), "volkswagen"),
    **dict.fromkeys(("focus", "fiesta", "puma", "kuga"), "ford"),
    **dict.fromkeys(("niro", "sportage", "picanto"), "kia"),
    **dict.fromkeys(("qashqai", "juke", "micra"), "nissan"),
    **dict.fromkeys(("octavia", "fabia"), "skoda"),
    **dict.fromkeys(("c3", "c4", "berlingo"), "citroen"),
}  # fmt: skip
_NOT_MODEL = (
    r"de|du|des|d'\w*|from|of|en|et|and|a|au|par|by|pour|for|avec|with|hybride|hybrid|electrique|electric|"
    r"diesel|essence|petrol|neuve?|new|occasion|used|modele|model(?! \w)|scooter|moto|voiture|car|depuis|"
    r"since|qui|that|immatricule\w*|\d{4}"
)
_VEHICLE = rf"(?P<v>\b(?:{_BRANDS})(?:\s+(?!(?:{_NOT_MODEL})\b)[\w-]+){{0,2}}|\b(?:{'|'.join(_MODEL_BRAND)})\b)"


def vehicle_name(words: tuple[str, ...]) -> tuple[str, ...]:
    """'clio' -> ('renault', 'clio'); 'vw golf' -> ('volkswagen', 'golf'): one name per model."""
    if not words:
        return words
    if words[0] == "vw":
        words = ("volkswagen", *words[1:])
    if words[0] in _MODEL_BRAND:
        words = (_MODEL_BRAND[words[0]], *words)
    return words[:3]


_OWNING = _c(
    r"\b(?:possede\w*|a|ai|ont|avons|roule(?:nt)?|conduit|conduisent|owns?|owned|drives?|driving|drove|"
    r"has|have|had|bought|achete\w*|acquis|rides?|riding|vendu|vend|sold|sell\w*|remplace\w*|replaced|"
    r"par une?|by an?|with an?|contre une?|detient|proprietaire)\b"
)
_DISPOSING = _c(r"\b(?:vendu|vend|sold|sell\w*|remplace\w*|replaced|got rid|a rendu|returned|epave)\b")
_VEHICLE_BOUNDARY = _c(r"[,;:.!?()]|\b(?:mais|but|puis|then|et|and|pour|for)\b|(?=\b(?:par|by|contre)\b)")

# --- contact -----------------------------------------------------------------------------------

_CONTACTING = _c(r"\b(?:appel\w*|rappel\w*|contact\w*|joindre|joignable|call\w*|reach\w*|ring)\b")
_AVAILABLE = _c(
    r"\b(?:appel\w*|rappel\w*|contact\w*|joindre|joignable|call\w*|reach\w*|disponible|indisponible|"
    r"available|unavailable|absent)\b"
)
_CHANNEL = (
    r"telephone|tel|phone|e-?mails?|mails?|courriels?|sms|textos?|text(?: messages?)?|courriers?|papier|"
    r"post|letters?|whatsapp|visio|video|agence|branch|messagerie|espace client"
)
_PAYING = _c(
    r"\b(?:paie\w*|paye\w*|paient|regle\w*|reglement|paiement|payment|pays|paying|paid|pay|cotisations?|"
    r"primes?|premiums?|prelevements?|debit|mensualites?)\b"
)

# --- the table ---------------------------------------------------------------------------------

_EMPLOYER_LEFT = _c(
    rf"\b(?:a quitte|quitte|left|quit|has left)\s+(?:son (?:poste|emploi|travail) (?:chez|a)\s+|"
    rf"(?:his|her|their) job at\s+|chez\s+)?{_NAME}{_END_NAME}"
)

RULES: tuple[SlotRule, ...] = (
    SlotRule(
        "residence",
        (
            _c(rf"\b(?:habite|habitent|vit|vivent|reside|resident|demeure|domiciliee?|lives?|living|resides?|"
               rf"residing|based){_ADV}\s+(?:a|au|aux|en|dans|sur|in|at|near|pres de)\s+{_PLACE}{_END_PLACE}"),
            _c(rf"\b(?:habite|habitent){_ADV}\s+(?!a\b|au\b|aux\b|en\b|dans\b|sur\b|chez\b|avec\b|seule?\b|"
               rf"ensemble\b|depuis\b|pres\b|un\b|une\b|le\b|la\b|les\b){_PLACE}{_END_PLACE}"),
            _c(rf"\b(?:demenage|installee?|emmenage|moved|relocated)\b(?:\s+(?:de|du|from)\s+[^,;:.()!?]+?)?"
               rf"{_ADV}\s+(?:a|au|aux|en|dans|sur|to|in|into)\s+{_PLACE}{_END_PLACE}"),
            _c(r"\b(?:adresse(?:\s+postale)?|address)(?:\s*:\s*|\s+(?:est|is)\s+)"
               r"(?P<v>[^;()!?]+?)(?=\s*[;()!?]|\.(?:\s|$)|\s*$)"),
        ),
        ValueKind.NAME, polar=True, max_words=10,
    ),
    SlotRule(
        "employer",
        (
            _c(rf"\b(?:travaille|travaillent|bosse|employee?|salariee?|embauchee?|works?|working|employed|"
               rf"hired){_ADV}\s+(?:chez|pour|par|at|for|by)\s+{_NAME}{_END_NAME}"),
            _c(rf"\b(?:employeur|employer)(?:\s*:\s*|\s+(?:est|is)\s+){_NAME}{_END_NAME}"),
            # "travaille à la SNCF / au Crédit Agricole": an article makes it an organisation, while
            # "travaille à Lyon" is a place of work, not an employer.
            _c(rf"\b(?:travaille|travaillent|salariee?|employee?|agent){_ADV}\s+(?:a la|a l'|au|aux|de la|de l'|du)\s*"
               rf"{_NAME}{_END_NAME}"),
            _EMPLOYER_LEFT,
            _c(rf"\b(?:rejoindre|rejoint|joined|join|joining|recrutee? (?:par|chez))\s+{_NAME}{_END_NAME}"),
        ),
        ValueKind.NAME, polar=True, negative_patterns=(_EMPLOYER_LEFT,), max_words=5,
    ),
    SlotRule(
        "profession",
        (_c(rf"\b(?:travaille comme|travaille en tant que|en tant que|works as(?: an?)?|working as(?: an?)?|"
            rf"profession\s*:?|metier\s*:?|job\s*:|occupation\s*:?|de profession)\s+{_NAME}{_END_NAME}"),),
        ValueKind.NAME, polar=True, max_words=3,
    ),
    SlotRule(
        "occupation_status",
        (_c(r"(?P<v>\betudiante?s?\b|\b(?:fait|font|poursuit) (?:ses|des|leurs) etudes\b|\bstudent\b|"
            r"\bstudying\b|\bretraitee\b|\b(?:est|sont|is|now)\s+(?:a la\s+)?retraitee?s?\b|"
            r"\b(?:pris|prend|partie?|depart) (?:sa|a la|en) retraite\b|\bretired\b|\bau chomage\b|"
            r"\bdemandeu(?:r|se) d'emploi\b|\bunemployed\b|\bsans emploi\b|\bjobless\b)"),),
        ValueKind.ENUM, polar=True,
        enum=_enum((r"etud|student|studying", "student"), (r"retrait|retired", "retired"),
                   (r"chomage|emploi|unemployed|jobless", "unemployed")),
    ),
    SlotRule(
        "marital_status",
        (_c(r"(?:^\W*|\b(?:est|sont|suis|is|are|got|get|getting|s'est|se sont|etre|been|devenue?|vit|vivent|"
            r"lives?|living|now)\s+(?:[\w']+\s+){0,2}?)(?P<v>mariee?s?|married|pacsee?s?|divorcee?s?|"
            r"divorced|celibataire|single|veu(?:f|ve)s?|widow(?:ed|er)?|separee?s?|separated|en couple|"
            r"remariee?s?|remarried|concubinage|in a relationship)\b"),),
        ValueKind.ENUM, polar=True,
        enum=_enum((r"^mari|^married|^remari", "married"), (r"^pacs", "pacs"), (r"^divorc", "divorced"),
                   (r"celibat|single", "single"), (r"veu|widow", "widowed"), (r"separ", "separated"),
                   (r"couple|concubinage|relationship", "couple")),
    ),
    SlotRule(
        "children",
        (
            _c(r"\b(?:a|ont|avec|de|has|have|with|of)\s+(?P<v>\d+|un|une|deux|trois|quatre|cinq|six|sept|huit|"
               r"neuf|dix|one|two|three|four|five|seven|eight|nine|ten|no|aucun)\s+(?:[\w']+\s+)?"
               r"(?:enfants?|kids?|children|child)\b"),
            _c(r"(?P<v>\bsans enfants?\b|\bpas d'enfants?\b|\baucun enfant\b|\bno (?:kids|children)\b|"
               r"\bchildless\b)"),
        ),
        ValueKind.NUMBER,
    ),
    SlotRule(
        "budget",
        (
            _c(rf"\bbudget\b[^.;]{{0,60}}?{_AMOUNT}"),
            _c(rf"{_AMOUNT}\s+(?:de|of)\s+budget\b"),
            _c(rf"\b(?:depasser|exceed|spend (?:more than|over)|pay more than|mettre plus de|"
               rf"depenser plus de)\s+{_AMOUNT}"),
            _c(rf"\b(?:mettre|depenser|spend|pay|payer)\s+(?:au maximum |au plus |jusqu'a |up to |at most |max )"
               rf"{_AMOUNT}"),
            _c(rf"\b(?:mettre|depenser|spend|pay|payer)\s+{_AMOUNT}\s+"
               rf"(?:maximum|max|au maximum|au plus|at most|tops)\b"),
        ),
        ValueKind.NUMBER, qualify=product,
    ),
    SlotRule(
        "income",
        (_c(rf"\b(?:salaire|revenus?|remuneration|salary|income|earns?|earning|gagne|gagnent|touche)\b"
            rf"[^.;]{{0,40}}?{_AMOUNT}"),),
        ValueKind.NUMBER,
    ),
    SlotRule(
        "premium",
        (_c(rf"\b(?:cotisations?|primes?|premiums?|mensualites?)\b[^.;]{{0,40}}?{_AMOUNT}"),),
        ValueKind.NUMBER, wildcard=False, qualify=product, per_person=False,
    ),
    SlotRule(
        "deductible",
        (
            _c(rf"\b(?:franchise|deductible|excess)\b[^.;]{{0,40}}?{_AMOUNT}"),
            _c(rf"{_AMOUNT}\s+(?:de\s+)?(?:franchise|deductible|excess)\b"),
        ),
        ValueKind.NUMBER, wildcard=False, qualify=product, per_person=False,
    ),
    SlotRule(
        "annual_mileage",
        (
            _c(rf"(?P<v>{_NUM})\s?km\b(?=[^.;]{{0,25}}(?:\bpar an\b|/an\b|\bannuels?\b|\bper year\b|"
               rf"\ba year\b|\byearly\b|\bannually\b))"),
            _c(rf"\bkilometrage annuel\b[^.;]{{0,30}}?(?P<v>{_NUM})\s?km\b"),
        ),
        ValueKind.NUMBER, per_person=False,
    ),
    SlotRule(
        "bonus_malus",
        (_c(r"\b(?:bonus-malus|bonus malus|bonus|malus|crm|coefficient|reduction-majoration|"
            r"no[- ]claims?(?: bonus| discount)?)\b[^.;]{0,40}?(?P<v>\d+[.,]\d+)"),),
        ValueKind.NUMBER,
    ),
    SlotRule(
        "phone",
        (_c(r"(?P<v>(?:\+33 ?|0033 ?|\b0)[1-9](?:[ .-]?\d{2}){4})(?!\d)"),),
        ValueKind.CODE, polar=True, qualify=phone_line,
    ),
    SlotRule(
        "email",
        (_c(r"(?P<v>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)"),),
        ValueKind.CODE, polar=True, qualify=email_use,
    ),
    SlotRule(
        "iban",
        (_c(r"(?P<v>\b[a-z]{2}\d{2}(?: ?[a-z0-9]{4}){2,7}(?: ?[a-z0-9]{1,3})?)\b"),),
        ValueKind.CODE,
    ),
    SlotRule(
        "bank",
        (_c(r"(?P<v>\b(?:la banque postale|banque postale|credit agricole|societe generale|bnp(?: paribas)?|"
            r"lcl|credit lyonnais|caisse d'epargne|credit mutuel|cic|boursorama|boursobank|ing|hello ?bank|"
            r"fortuneo|banque populaire|credit du nord|hsbc|barclays|lloyds|natwest|monzo|revolut|n26|"
            r"qonto|monabanq|bforbank)\b)"),),
        ValueKind.ENUM, polar=True, qualify=account,
        negative_words=_c(r"\b(?:cloture\w*|ferme\w*|closed|a quitte|quitte|left)\b"),
        context=_c(r"\b(?:comptes?|livrets?|accounts?|client(?:e)? (?:de|chez|a|au)|banks? with|"
                   r"carte bancaire|rib|domiciliation)\b"),
        enum=_enum((r"postale", "banque postale"), (r"agricole", "credit agricole"),
                   (r"generale", "societe generale"), (r"bnp", "bnp paribas"), (r"lcl|lyonnais", "lcl"),
                   (r"epargne", "caisse d'epargne"), (r"mutuel", "credit mutuel"), (r"bourso", "boursobank"),
                   (r"hello", "hello bank"), (r"populaire", "banque populaire"), (r".+", RAW)),
    ),
    SlotRule(
        "vehicle",
        (_c(_VEHICLE),),
        ValueKind.NAME, exclusive=False, polar=True, negative_words=_DISPOSING,
        prefix_requires=_OWNING, boundary=_VEHICLE_BOUNDARY, canonical=vehicle_name, max_words=3,
    ),
    SlotRule(
        "contact_time",
        (_c(r"(?P<v>\bapres-midi\b|\bapres midi\b|\bafternoons?\b|\bavant midi\b|\bbefore noon\b|\bmatinee\b|"
            r"\bmatins?\b|\bmornings?\b|\bsoiree\b|\bsoirs?\b|\bevenings?\b|\bfin de (?:journee|soiree)\b|"
            r"\bend of the day\b|\blate afternoon\b|\bafter [5-9] ?pm\b|"
            r"\bapres 1[7-9] ?h\b|\bentre midi et deux\b|\bmidi\b|\blunch ?time\b|\bheure du dejeuner\b|"
            r"\bnoon\b)"),),
        ValueKind.ENUM, polar=True, per_person=False, context=_CONTACTING,
        enum=_enum((r"apres.midi|afternoon", "afternoon"), (r"avant|before|matin|morning", "morning"),
                   (r"soir|evening|pm|apres|fin de|end of|late", "evening"), (r"midi|lunch|dejeuner|noon", "noon")),
    ),
    SlotRule(
        "contact_day",
        (_c(r"(?P<v>\b(?:lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche|week-?end|en semaine|monday|"
            r"tuesday|wednesday|thursday|friday|saturday|sunday|weekdays?)s?\b)"),),
        ValueKind.ENUM, exclusive=False, polar=True, per_person=False, context=_AVAILABLE,
        enum=_enum((r"lundi|monday", "mon"), (r"mardi|tuesday", "tue"), (r"mercredi|wednesday", "wed"),
                   (r"jeudi|thursday", "thu"), (r"vendredi|friday", "fri"), (r"samedi|saturday", "sat"),
                   (r"dimanche|sunday", "sun"), (r"week-?end", "weekend"), (r"semaine|weekday", "weekdays")),
    ),
    SlotRule(
        "contact_channel",
        (
            _c(rf"\b(?:prefer\w*|souhait\w*|veu[tx]|voudrai\w*|wants?|likes?|rather|aime\w*|contact\w*|joindre|"
               rf"joignable|recevoir|receive|refuse\w*|accepte\w*|uniquement|only|seulement)\b[^.;]{{0,60}}?"
               rf"\b(?:par|by|via|en|au|on|sur)\s+(?:le |la |l'|les |un |une )?(?P<v>{_CHANNEL})\b"),
            _c(rf"\bprefer\w*\s+(?:le |la |l'|les |the )?(?P<v>{_CHANNEL})\b"),
        ),
        ValueKind.ENUM, polar=True, per_person=False, qualify=purpose,
        enum=_enum((r"tel|phone", "phone"), (r"mail|courriel|messagerie", "email"), (r"sms|texto|text", "sms"),
                   (r"courrier|papier|post|letter", "post"), (r"agence|branch", "branch"),
                   (r"whatsapp", "whatsapp"), (r"visio|video", "video"), (r"espace", "portal")),
    ),
    SlotRule(
        "payment_method",
        (_c(r"(?P<v>\bprelevements?\b|\bdirect debit\b|\bcheques?\b|\bchecks?\b|\bcarte (?:bancaire|bleue)\b|"
            r"\bpar carte\b|\bby card\b|\bcard\b|\bcb\b|\bvirements?\b|\bbank transfer\b|\btransfer\b|"
            r"\bespeces\b|\bcash\b)"),),
        ValueKind.ENUM, wildcard=False, polar=True, per_person=False, qualify=product, context=_PAYING,
        enum=_enum((r"prelevement|debit", "direct_debit"), (r"cheque|check", "cheque"),
                   (r"carte|card|cb", "card"), (r"virement|transfer", "transfer"), (r"especes|cash", "cash")),
    ),
    SlotRule(
        "payment_frequency",
        (_c(r"(?P<v>\bmensuel\w*|\bchaque mois\b|\bpar mois\b|\btous les mois\b|\bmonthly\b|\bper month\b|"
            r"\ba month\b|\beach month\b|\bevery month\b|\btrimestriel\w*|\b(?:par|chaque) trimestre\b|"
            r"\btous les trimestres\b|\bquarterly\b|\bevery quarter\b|\bsemestriel\w*|"
            r"\bannuel\w*|\b(?:une )?(?:seule )?fois par an\b|\bpar an\b|\bchaque annee\b|\bannually\b|"
            r"\byearly\b|\bper year\b|\ba year\b|\bonce a year\b|\bevery year\b|\bannual\b)"),),
        ValueKind.ENUM, wildcard=False, per_person=False, qualify=product, context=_PAYING,
        enum=_enum((r"mensuel|mois|month", "monthly"), (r"trimest|quarter", "quarterly"),
                   (r"semest", "half_yearly"), (r"an|year|annee|annual", "yearly")),
    ),
    SlotRule(
        "cover_level",
        (
            _c(r"\bformule\s+(?:[\w']+\s+)?(?P<v>tous risques|tout risque|tiers (?:plus|etendu|maxi)|tiers|"
               r"intermediaire|essentielle?|confort|premium|basique|eco|integrale|optimale?|serenite)\b"),
            _c(r"(?P<v>\btous risques\b|\btout risque\b|\ball risks?\b|\bcomprehensive\b|\bau tiers\b|"
               r"\btiers (?:plus|etendu)\b|\bthird[- ]party(?: fire and theft)?\b)"),
        ),
        ValueKind.ENUM, wildcard=False, per_person=False, qualify=product,
        enum=_enum((r"tous|tout|all risk|comprehensive", "all_risks"), (r"plus|etendu|maxi|fire", "third_plus"),
                   (r"tiers|third", "third_party"), (r"intermediaire", "intermediate"),
                   (r"essentiel", "essential"), (r"confort", "comfort"), (r"premium", "premium"),
                   (r"basique|eco", "basic"), (r"integral", "integral"), (r"optimal", "optimal"),
                   (r"serenite", "serenity")),
    ),
    SlotRule(
        "housing_tenure",
        (_c(r"(?P<v>\bproprietaires?\b(?! (?:du|de la|d'une?) (?:vehicule|voiture|moto))|\blocataires?\b|"
            r"\bhomeowners?\b|\btenants?\b|\brenters?\b|\brenting\b|\bhebergee?s? (?:chez|par)\b|"
            r"\bowns (?:a|the|his|her|their) (?:flat|house|home|apartment)\b|"
            r"\brents (?:a|the|his|her|their) (?:flat|house|home|apartment)\b)"),),
        ValueKind.ENUM, polar=True,
        enum=_enum((r"propriet|homeowner|owns", "owner"), (r"locat|tenant|rent", "tenant"), (r"heberg", "hosted")),
    ),
    SlotRule(
        "claim_status",
        (_c(r"(?P<v>\ben cours\b(?: d'(?:expertise|instruction|indemnisation))?|\bouverte?\b|\bopen\b|\bpending\b|"
            r"\ben attente\b|\bexpertise\b|\bclos\b|\bclose\b|\bcloture\b|\bfermee?\b|\bclosed\b|\bsettled\b|"
            r"\bindemnisee?\b|\bremboursee?\b|\bpaid out\b|\brefusee?\b|\brejetee?\b|\brejected\b|"
            r"\bdeclined\b|\bclasse sans suite\b)"),),
        ValueKind.ENUM, per_person=False, qualify=claim_type,
        context=_c(r"\b(?:sinistres?|claims?|degats?|dommages?)\b"),
        enum=_enum((r"refus|rejet|reject|declin|sans suite", "refused"),
                   (r"clos|close|clotur|ferme|settled|indemnis|rembours|paid", "closed"),
                   (r"cours|ouvert|open|pending|attente|expertise", "open")),
    ),
    SlotRule(
        "appointment",
        (_c(rf"(?P<v>\b\d{{1,2}}(?:er)? (?:{_MONTHS})\b|\b\d{{1,2}}/\d{{1,2}}(?:/\d{{2,4}})?\b)"),),
        ValueKind.DATE, exclusive=False, polar=True, per_person=False, qualify=with_whom,
        negative_words=_c(r"\b(?:annule\w*|annulation|cancel\w*|called off)\b"), negative_in_text=True,
        context=_c(r"\b(?:rendez-vous|rdv|appointment|meeting|visite|passera|passage|viendra|"
                   r"will (?:come|visit)|rencontre)\b"),
    ),
    SlotRule(
        "smoker",
        (_c(r"(?P<v>\bnon[- ]fumeu(?:r|se)\b|\bfumeu(?:r|se)s?\b|\bfume\b|\bnon[- ]smoker\b|\bsmokers?\b|"
            r"\bsmokes\b|\barrete de fumer\b|\bquit smoking\b|\bstopped smoking\b)"),),
        ValueKind.ENUM, polar=True, negative_words=_c(r"\bnon[- ]|arrete|quit|stopped"),
        enum=_enum((r".", "smoker"),),
    ),
    SlotRule(
        "parking",
        (_c(r"(?P<v>\bgarage(?: ferme| prive| box)?\b|\bbox (?:ferme|prive)\b|\bparking (?:prive|ferme|securise)\b|"
            r"\bparking (?:souterrain|couvert|collectif)\b|\bdans la rue\b|\bsur la voie publique\b|"
            r"\b(?:in|on) the street\b|\bdriveway\b|\bdans (?:la|une) cour\b)"),),
        ValueKind.ENUM, polar=True, per_person=False,
        context=_c(r"\b(?:garee?s?|gare|stationne\w*|parked|parks|park|dort|nuit|night|stationnement|overnight)\b"),
        enum=_enum((r"garage|box|prive|ferme|securise", "garage"), (r"souterrain|couvert|collectif", "car_park"),
                   (r"rue|voie|street", "street"), (r"driveway|cour", "driveway")),
    ),
    SlotRule(
        "age",
        (_c(r"\b(?:a|has|agee?(?: de)?|aged|is)\s+(?P<v>\d{2})\s+(?:ans|years old)\b"),),
        ValueKind.NUMBER,
    ),
    SlotRule(
        "birth_year",
        (_c(r"\bnee?\s+(?:le [^.;]{0,20}?)?en (?P<v>\d{4})\b"), _c(r"\bborn in (?P<v>\d{4})\b")),
        ValueKind.NUMBER,
    ),
    SlotRule(
        "contract",
        (_c(r"\b(?:a souscrit|souscrit|a resilie|resilie|resiliation d[eu']?|a|possede|detient|beneficie d[eu']?|"
            r"couverte? par|has|holds|took out|cancell?ed|terminated|n'a plus(?: d[eu'])?)\s+(?:[\w']+\s+){0,2}?"
            r"(?P<v>assurance|contrat|police|insurance|policy|mutuelle|complementaire)\b"),),
        ValueKind.ENUM, wildcard=False, polar=True, qualify=product,
        negative_words=_c(r"\b(?:a resilie|resilie|resiliation|cancell?ed|terminated)\b"),
        enum=_enum((r".", "held"),),
    ),
)
