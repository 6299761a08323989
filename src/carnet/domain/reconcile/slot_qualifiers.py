"""Qualifiers: which contract, claim, account, line or purpose a slot's value is about.

Each takes the folded note and the value's start and returns a label, ``*`` when the note names
none: the franchise of the *auto* contract is not the franchise of the *home* one.
"""

from __future__ import annotations

import re

from carnet.domain.reconcile.slot_rule import Pattern, enums


def _first_label(labels: tuple[tuple[Pattern, str], ...], folded: str, start: int) -> str:
    """The label nearest after ``start`` (the value's own clause), else the first in the note."""
    after = [(m.start(), label) for p, label in labels if (m := p.search(folded, start))]
    if after:
        return min(after)[1]
    anywhere = [(m.start(), label) for p, label in labels if (m := p.search(folded))]
    return min(anywhere)[1] if anywhere else "*"


_PRODUCTS = enums(
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


_CLAIM_TYPES = enums(
    (r"\b(?:degats? des eaux|fuite|water damage|leak)\b", "water"),
    (r"\b(?:bris de glace|pare-brise|windscreen|windshield|glass)\b", "glass"),
    (r"\b(?:vol|cambriolage|theft|stolen|burglary)\b", "theft"),
    (r"\b(?:incendie|fire)\b", "fire"),
    (r"\b(?:grele|tempete|hail|storm)\b", "weather"),
    (r"\b(?:accident|collision|accrochage|crash)\b", "accident"),
)


def claim_type(folded: str, start: int) -> str:
    return _first_label(_CLAIM_TYPES, folded, 0)


_WITH_WHOM = enums(
    (r"\b(?:expert|experte|loss adjuster|assessor)\b", "expert"),
    (r"\b(?:agence|branch|agency)\b", "branch"),
    (r"\b(?:conseill\w*|advis[eo]r|adviser)\b", "advisor"),
    (r"\b(?:garage|carross\w*|body shop|reparateur)\b", "garage"),
    (r"\b(?:medecin|docteur|doctor|medical)\b", "doctor"),
    (r"\b(?:notaire|notary)\b", "notary"),
)


def with_whom(folded: str, start: int) -> str:
    return _first_label(_WITH_WHOM, folded, 0)


_ACCOUNTS = enums(
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


_EMAIL_USES = enums(
    (r"\b(?:professionnel\w*|pro|travail|bureau|work|business|office)\b", "work"),
    (r"\b(?:personnel\w*|perso|personal|private|privee?)\b", "personal"),
)


def email_use(folded: str, start: int) -> str:
    return _first_label(_EMAIL_USES, folded, 0)


_PURPOSES = enums(
    (r"\b(?:releves?|documents?|statements?|factures?|avis d'echeance|attestations?|invoices?)\b", "documents"),
    (r"\b(?:offres?|prospection|commercia\w*|marketing|newsletters?|promotions?|publicit\w*)\b", "marketing"),
)


def purpose(folded: str, start: int) -> str:
    label = _first_label(_PURPOSES, folded, 0)
    return "contact" if label == "*" else label
