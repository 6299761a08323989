"""Team procedures: how the team handles a case, validated by a person before the assistant follows it.

A team procedure belongs to the tenant (optionally to one agent or one queue), not to a member: it is
control-plane data, not a memory. Its lifecycle::

    proposed ──approve──▶ approved ──retire──▶ retired
        └──────reject───▶ rejected

Only ``approved`` procedures ever reach ``assemble``. Nothing goes back: a rejected or retired
procedure is proposed again as a new one, so every decision stays in the audit trail as it was.

The conflict rule (``conflicts``) reads which channels a procedure prescribes and which channels the
member's current profile facts refuse, with the channel words of ``topic_rules.CHANNELS``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from carnet.domain.reconcile.topic_rules import CHANNELS
from carnet.domain.text import fold

EXTRACTION = "extraction"  # ``proposed_by`` of a procedure read from calls, not typed by a person
MAX_TEXT = 1000
MAX_KEYWORDS = 10


class ProcedureStatus(StrEnum):
    PROPOSED = "proposed"
    APPROVED = "approved"
    REJECTED = "rejected"
    RETIRED = "retired"


class Decision(StrEnum):
    APPROVE = "approve"
    REJECT = "reject"
    RETIRE = "retire"


# decision → (the status it starts from, the status it leads to)
TRANSITIONS: dict[Decision, tuple[ProcedureStatus, ProcedureStatus]] = {
    Decision.APPROVE: (ProcedureStatus.PROPOSED, ProcedureStatus.APPROVED),
    Decision.REJECT: (ProcedureStatus.PROPOSED, ProcedureStatus.REJECTED),
    Decision.RETIRE: (ProcedureStatus.APPROVED, ProcedureStatus.RETIRED),
}


@dataclass(frozen=True, slots=True)
class TeamProcedure:
    id: str
    tenant: str
    text: str
    status: ProcedureStatus
    proposed_by: str  # the proposing key id, or ``EXTRACTION``
    created_at: datetime
    updated_at: datetime
    agent_id: str | None = None  # only for this agent (None: any)
    queue: str | None = None  # only for this queue (None: any)
    applies_when: tuple[str, ...] = ()  # keywords of the cases it is about
    decided_by: str | None = None  # who approved, rejected or retired it last
    # The keyed hash of the member whose call it was read from (``EXTRACTION``), None when a person
    # typed it: a procedure derived from a member is deleted with that member, whatever its status
    # (issue 46). A person proposing the same text adopts it (the origin is cleared).
    origin: str | None = None

    def applies_to(self, *, agent_id: str | None, queue: str | None) -> bool:
        """Tenant-wide, or the caller's agent / queue (a scoped one never reaches another's context)."""
        return (self.agent_id is None or self.agent_id == agent_id) and (self.queue is None or self.queue == queue)


def after(decision: Decision, current: ProcedureStatus) -> ProcedureStatus | None:
    """The status ``decision`` leads to from ``current``, or None when it is not allowed from there."""
    start, end = TRANSITIONS[decision]
    return end if current is start else None


# A refusal: a negation shortly before the channel word ("ne veut pas d'e-mail", "jamais de papier",
# "plus de courrier", "refuse les appels", "pas par SMS", "sans appel", "no calls", "never email").
_NEGATION = re.compile(
    r"(?:\bne (?:veut|souhaite|desire|accepte)\w* (?:pas|plus|jamais)\b|\bjamais\b|\bplus (?:de|d'|par)|"
    r"\brefus\w*\b|\bpas (?:de|d'|par|d'etre)|\bsans\b|\baucun\w*\b|\bne \w+ (?:pas|plus|jamais)\b|"
    r"\bno\b|\bnever\b|\bdoes not want\b|\brefuses?\b|\bnot by\b)[^.;,]{0,30}$")


def _mentions(text: str) -> list[tuple[str, bool]]:
    """Each channel the text names, and whether a negation comes shortly before it."""
    folded = fold(text)
    found = []
    for channel, pattern in CHANNELS:
        for match in pattern.finditer(folded):
            found.append((channel, _NEGATION.search(folded[max(0, match.start() - 40):match.start()]) is not None))
    return found


def prescribed_channels(text: str) -> tuple[str, ...]:
    """The channels a procedure tells the advisor to use (named without a negation)."""
    return tuple(dict.fromkeys(c for c, negated in _mentions(text) if not negated))


def refused_channels(text: str) -> tuple[str, ...]:
    """The channels a member's fact refuses ("ne veut pas d'e-mail" → email)."""
    return tuple(dict.fromkeys(c for c, negated in _mentions(text) if negated))


@dataclass(frozen=True, slots=True)
class Conflict:
    channel: str
    constraint: str  # the member's fact, as written


def conflicts(procedure_text: str, constraints: Sequence[str]) -> list[Conflict]:
    """The member's facts that refuse a channel the procedure prescribes."""
    wanted = set(prescribed_channels(procedure_text))
    out: list[Conflict] = []
    for fact in constraints:
        out.extend(Conflict(c, fact) for c in refused_channels(fact) if c in wanted)
    return out


def keyword_hit(procedure: TeamProcedure, query: str) -> bool:
    """A keyword of ``applies_when`` in the query (folded, whole words): relevant whatever the cosine."""
    folded = f" {fold(query)} "
    return any(re.search(rf"(?<!\w){re.escape(fold(k))}(?!\w)", folded) for k in procedure.applies_when if k.strip())


def dedup_key(text: str) -> str:
    """What makes two proposals the same: the folded text, spaces and final punctuation aside."""
    return " ".join(fold(text).split()).rstrip(" .!;")


# An advisor stating how the team handles a kind of case: "pour un dégât des eaux, on demande toujours
# des photos…", "pour une résiliation, je propose toujours…", "pour les sinistres auto, nous devons
# toujours vérifier…". Read on the folded text; the sentence is kept as written.
_CASE = r"pour (?:un|une|les|tout|toute|tous|chaque) (?P<case>[a-z' -]{3,60}?)\s*,\s*"
_WHO = r"(?:on|je|j'|nous)\s*"
_STATED = re.compile(
    _CASE + _WHO + r"(?:(?:doi[st]|devons|dois|faut)\s+)?\w+\s+(?:\w+\s+)?toujours\s+\S[^.;!?]{2,200}")


@dataclass(frozen=True, slots=True)
class Stated:
    text: str  # the advisor's sentence, as written
    case: str  # the case it is about, as written ("dégât des eaux")


def stated_procedures(advisor_texts: Sequence[str]) -> list[Stated]:
    """The advisor's statements of a standing way of handling a case (general French), once each."""
    found: dict[str, Stated] = {}
    for text in advisor_texts:
        folded = fold(text)
        if len(folded) != len(text):  # fold changed the length (ligatures): spans would not line up
            continue
        for match in _STATED.finditer(folded):
            sentence = text[match.start():match.end()].strip()
            sentence = sentence[0].upper() + sentence[1:] + "."
            case = text[match.start("case"):match.end("case")]
            found.setdefault(dedup_key(sentence), Stated(sentence, " ".join(case.split())))
    return list(found.values())
