"""One short summary per session: when, why the member called, and what was decided.

"Appel du 12 mars 2024 : déclaration d'un dégât des eaux ; un expert passera le 15 mars." The
topic comes from what the member said (facts and questions alike: "où en est mon remboursement ?"
is the reason for a call even though it is no fact), matched against a table of call reasons; the
decisions are the advisor's commitments already extracted as facts. A session with neither has no
episode: an episode saying only "Appel du 12 mars" would be noise in every context.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from carnet.domain.embedding_text import human_date
from carnet.domain.text import fold

# (pattern on folded text, French topic, English topic); the first matches of a call, in order of
# appearance, name it.
_TOPICS: tuple[tuple[re.Pattern[str], str, str], ...] = tuple(
    (re.compile(p), fr, en)
    for p, fr, en in (
        (r"degats? des eaux|fuite d'eau|water damage|\bleak", "dégât des eaux", "water damage"),
        (r"\bincendie|\bfire\b", "incendie", "fire"),
        (r"cambriol|\bvol\b|\bvole\b|burglar|theft|stolen", "vol", "theft"),
        (r"bris de glace|pare-brise|windscreen|windshield", "bris de glace", "broken glass"),
        (r"\baccident|accroch|collision|\bcrash", "accident", "accident"),
        (r"tempete|grele|\bstorm|\bhail", "tempête", "storm damage"),
        (r"\bsinistre|\bclaim\b", "sinistre", "claim"),
        (r"demenag|nouvelle adresse|changement d'adresse|\bmoved\b|new address", "changement d'adresse",
         "change of address"),
        (r"resili|\bcancel", "résiliation", "cancellation"),
        (r"reclamation|contest|plainte|mecontent|complain|dispute", "réclamation", "complaint"),
        (r"opposition|carte (?:bancaire )?(?:perdue|volee)|perdu (?:sa|ma|votre) carte|lost (?:my|their) card",
         "opposition sur carte bancaire", "card blocked"),
        (r"(?<!de )\bpret\b|credit|financ|emprunt|\bloan|mortgage", "financement", "financing"),
        (r"\bdevis|\bquote", "demande de devis", "quote request"),
        (r"impaye|rejet|retard de paiement|overdue|unpaid", "incident de paiement", "payment incident"),
        (r"rembours|refund", "remboursement", "refund"),
        (r"attestation|certificate", "demande d'attestation", "certificate request"),
        (r"formule|garantie|option|\bcover", "garanties du contrat", "policy cover"),
        (r"cotisation|prime|premium|tarif|reduction|discount", "cotisation", "premium"),
        (r"e-?mail|courriel|telephone|coordonnees|contact|phone", "coordonnées", "contact details"),
        (r"\bmarie|mariage|naissance|\bnee?\b|bebe|divorc|deces|married|baby|divorce|\bborn\b",
         "situation familiale", "family situation"),
        (r"\bajout|beneficiaire|rattach|add (?:my|a) ", "ajout d'un bénéficiaire", "adding a beneficiary"),
    )
)
_DECLARE = re.compile(r"\bdeclar|\bsignal|\breport")
_CLAIMS = frozenset({"dégât des eaux", "incendie", "vol", "bris de glace", "accident", "sinistre"})
_MAX_TOPICS = 2
_MAX_DECISIONS = 2
_MAX_DECISION_CHARS = 140


def topics(member_texts: Sequence[str], *, english: bool) -> list[str]:
    """Call reasons named by the member, first mentioned first, at most ``_MAX_TOPICS``."""
    found: list[tuple[int, str]] = []
    folded = " | ".join(fold(t) for t in member_texts)
    for pattern, fr, en in _TOPICS:
        m = pattern.search(folded)
        if m is not None and all(label != (en if english else fr) for _, label in found):
            found.append((m.start(), en if english else fr))
    labels = [label for _, label in sorted(found)][:_MAX_TOPICS]
    if labels and not english and _DECLARE.search(folded) and labels[0] in _CLAIMS:
        labels[0] = f"déclaration d'un {labels[0]}"  # "je voudrais déclarer un dégât des eaux"
    return labels


def summary(*, at: datetime | None, topics: Sequence[str], decisions: Sequence[str], english: bool) -> str | None:
    """The episode's text, or None when the call had no topic and no decision."""
    if not topics and not decisions:
        return None
    if english:
        head = f"Call on {human_date(at, 'en')}" if at else "Call"
    else:
        head = f"Appel du {human_date(at, 'fr')}" if at else "Appel"
    parts = [" et ".join(topics) if not english else " and ".join(topics)] if topics else []
    parts += [_clause(d) for d in decisions[:_MAX_DECISIONS]]
    return f"{head} : {' ; '.join(parts)}." if not english else f"{head}: {'; '.join(parts)}."


def _clause(decision: str) -> str:
    text = decision.strip().rstrip(".")
    if len(text) > _MAX_DECISION_CHARS:
        text = text[:_MAX_DECISION_CHARS].rsplit(" ", 1)[0] + "…"
    return text[:1].lower() + text[1:] if not text.startswith("<") else text
