"""Team procedures: proposed (by a supervisor, or read from calls), approved or rejected by a person
with the ``supervisor`` role, retired; only approved ones reach ``assemble`` (``relevant``).

The facade runs these behind its door (role, checks, audit entry); this module holds the rules:
what a proposal may contain (no personal data: it is shown in every member's context), which
decision applies to which status, and which approved procedures a query calls for.

Relevance: an approved procedure is relevant when one of its ``applies_when`` keywords is in the
query (score 1.0), or when its calibrated cosine to the query (``CosineScale.relevance``, the
embedder's own scale) reaches ``TEAM_FLOOR`` (or the request's ``min_relevance`` if higher). A tenant
has a handful of procedures, so each is embedded once (``ProcedureVectors``) and compared in memory:
no index. Measured with the default e5-small (calibrated zero 0.826, one 0.924): "Le membre veut
résilier son contrat" → the cancellation procedure 0.38, the others 0.0; but "une fuite d'eau dans sa
cuisine" → the water-damage procedure only 0.01. Short French sentences sit too close together for
the cosine alone, so the floor stays low (0.15) against noise and ``applies_when`` ("fuite", "dégât
des eaux") is what a supervisor sets for the cases that must never be missed.
"""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from carnet.domain.procedures import (
    EXTRACTION,
    MAX_KEYWORDS,
    MAX_TEXT,
    Conflict,
    Decision,
    ProcedureStatus,
    TeamProcedure,
    after,
    conflicts,
    keyword_hit,
)
from carnet.domain.scoring import CosineScale
from carnet.errors import InvalidInput, ProcedureHasPersonalData, ProcedureNotFound, ProcedureState
from carnet.ports import Clock, TeamProcedures, Vector
from carnet.services import pii as pii_service
from carnet.services.memories.query_cache import CachedEmbedder

TEAM_FLOOR = 0.15  # calibrated relevance (see the module's docstring for the measured values)
_SCOPE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$")


@dataclass(frozen=True, slots=True)
class Proposal:
    text: str
    agent_id: str | None = None
    queue: str | None = None
    applies_when: tuple[str, ...] = ()


def check_proposal(pii: pii_service.Pii, tenant: str, proposal: Proposal) -> None:
    """``InvalidInput`` for an empty or too long text, bad scope names or keywords;
    ``ProcedureHasPersonalData`` when the detector finds personal data in the text or keywords."""
    if not proposal.text.strip() or len(proposal.text) > MAX_TEXT:
        raise InvalidInput(f"a procedure's text must be 1-{MAX_TEXT} characters")
    for label, name in (("agent_id", proposal.agent_id), ("queue", proposal.queue)):
        if name is not None and not _SCOPE_NAME.match(name):
            raise InvalidInput(f"{label} must be 1-64 characters of letters, digits, '.', '_', ':' and '-'")
    if len(proposal.applies_when) > MAX_KEYWORDS or any(not k.strip() or len(k) > 60 for k in proposal.applies_when):
        raise InvalidInput(f"applies_when takes up to {MAX_KEYWORDS} keywords of 1-60 characters")
    kinds = pii_service.personal_data_kinds(pii, tenant, " ; ".join((proposal.text, *proposal.applies_when)))
    if kinds:
        raise ProcedureHasPersonalData(kinds)


def propose(store: TeamProcedures, clock: Clock, *, tenant: str, proposal: Proposal,
            proposed_by: str, origin: str | None = None) -> TeamProcedure:
    """A new proposed procedure, or the live one with the same text (a proposal is made once).
    ``origin``: the keyed hash of the member whose call it was read from (None: a person's text,
    which adopts a live derived one of the same text)."""
    now = clock.now()
    return store.add(TeamProcedure(
        id=str(uuid.uuid4()), tenant=tenant, text=proposal.text.strip(), status=ProcedureStatus.PROPOSED,
        proposed_by=proposed_by, created_at=now, updated_at=now, agent_id=proposal.agent_id, queue=proposal.queue,
        applies_when=tuple(dict.fromkeys(k.strip() for k in proposal.applies_when)), origin=origin))


def check_decision(store: TeamProcedures, *, tenant: str, procedure_id: str, decision: Decision) -> TeamProcedure:
    """The procedure, if ``decision`` applies to its status (else ``ProcedureNotFound``/``ProcedureState``)."""
    found = store.get(tenant, procedure_id)
    if found is None:
        raise ProcedureNotFound(procedure_id)
    if after(decision, found.status) is None:
        raise ProcedureState(procedure_id, found.status.value, decision.value)
    return found


def decide(store: TeamProcedures, clock: Clock, *, tenant: str, procedure_id: str, decision: Decision,
           decided_by: str) -> TeamProcedure:
    current = check_decision(store, tenant=tenant, procedure_id=procedure_id, decision=decision)
    target = after(decision, current.status)
    assert target is not None  # checked above
    done = store.decide(tenant, procedure_id, expected=current.status, status=target, decided_by=decided_by,
                        at=clock.now())
    if done is None:  # another supervisor decided in between
        latest = store.get(tenant, procedure_id)
        raise ProcedureState(procedure_id, latest.status.value if latest else "gone", decision.value)
    return done


class ProcedureVectors:
    """Each approved procedure's passage vector, computed once per (id, text) and kept in memory."""

    def __init__(self) -> None:
        self._vectors: dict[tuple[str, str], Vector] = {}
        self._lock = threading.Lock()

    def of(self, embedder: CachedEmbedder, procedures: Sequence[TeamProcedure]) -> list[Vector]:
        with self._lock:
            missing = [p for p in procedures if (p.id, p.text) not in self._vectors]
        if missing:
            vectors = embedder.embed_passages([p.text for p in missing])
            with self._lock:
                for p, v in zip(missing, vectors, strict=True):
                    self._vectors[(p.id, p.text)] = np.asarray(v, dtype=np.float32)
        with self._lock:
            return [self._vectors[(p.id, p.text)] for p in procedures]

    def forget(self, procedure_id: str) -> None:
        with self._lock:
            for key in [k for k in self._vectors if k[0] == procedure_id]:
                del self._vectors[key]


@dataclass(frozen=True, slots=True)
class TeamPick:
    """An approved procedure chosen for a context, its relevance, and the member's facts it conflicts with."""

    procedure: TeamProcedure
    score: float
    conflicts: tuple[Conflict, ...] = ()


@dataclass(frozen=True, slots=True)
class TeamSource:
    """What ``assemble`` needs to add the team's procedures: the store, the vectors, the caller's scope."""

    store: TeamProcedures
    vectors: ProcedureVectors
    agent_id: str | None = None
    queue: str | None = None


def relevant(source: TeamSource, embedder: CachedEmbedder, scale: CosineScale, *, tenant: str, query: str,
             qvec: Vector, floor: float) -> list[TeamPick]:
    """The approved procedures of the caller's scope the query calls for, best first (never a
    proposed, rejected or retired one: only ``approved`` rows are read)."""
    approved = [p for p in source.store.list(tenant, status=ProcedureStatus.APPROVED)
                if p.applies_to(agent_id=source.agent_id, queue=source.queue)]
    if not approved:
        return []
    q = np.asarray(qvec, dtype=np.float32)
    picks = []
    for p, v in zip(approved, source.vectors.of(embedder, approved), strict=True):
        cosine = float(np.dot(q, v) / ((np.linalg.norm(q) * np.linalg.norm(v)) or 1.0))
        score = 1.0 if keyword_hit(p, query) else scale.relevance(cosine)
        if score >= max(floor, TEAM_FLOOR):
            picks.append(TeamPick(p, score))
    return sorted(picks, key=lambda t: -t.score)


def flag_conflicts(picks: Sequence[TeamPick], constraints: Sequence[str]) -> list[TeamPick]:
    """Each pick with the member's current facts that refuse a channel it prescribes."""
    return [TeamPick(t.procedure, t.score, tuple(conflicts(t.procedure.text, constraints))) for t in picks]


__all__ = ["EXTRACTION", "Proposal", "TeamPick", "TeamSource", "check_proposal", "decide", "propose", "relevant"]
