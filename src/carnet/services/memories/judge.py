"""The LLM's contradiction judgment, the second step of a cascade: which of the subject's older facts
a fact just written makes obsolete, asked only where reconcile's learned judge was unsure.

Reconcile's judge (``domain/reconcile/judge_model``) closes what it is confident of and names, in each
created fact's ``Outcome.uncertain``, the candidates whose probability fell in its uncertain band. When
an LLM is configured, only those are shown to ``ContradictionJudge.obsolete`` (with the fact); those it
names are superseded (rule ``llm``); those it does not name are no longer ``contested_by`` the fact
(:mod:`carnet.domain.contested`). Confident cases never call it, so most writes cost no LLM call.
The model sees placeholders only (``pseudo_text``), and only ids it was given can come back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

import structlog

from carnet.domain.records import HistoryEntry, Kind, Memory, Scope, Status
from carnet.errors import ExtractionFailed
from carnet.ports import ContradictionJudge
from carnet.services.memories.remember import NewMemory, Outcome, remember
from carnet.services.needs import JudgeNeeds
from carnet.services.scope import scope_for

log = structlog.get_logger(__name__)


def remember_judged(deps: JudgeNeeds, judge: ContradictionJudge, *, tenant: str, subject_id: str,
                    items: Sequence[NewMemory], actor: str) -> list[Outcome]:
    """``remember``, then the model's judgment on what was created, under the subject's lock. The
    judgment refines reconcile's rules: if the model fails, the memories stay written as the rules
    left them (logged, never raised), and a later write of the subject is judged against them."""
    scope = scope_for(deps, tenant, subject_id)
    with deps.locks.for_scope(scope):
        outcomes = remember(deps, tenant=tenant, subject_id=subject_id, items=items, actor=actor)
        try:
            return judge_outcomes(deps, judge, scope, outcomes, actor=actor)
        except ExtractionFailed as exc:
            log.warning("contradiction_judgment_failed", path="remember", reason=exc.context.get("reason"))
            return outcomes


def judge_outcomes(deps: JudgeNeeds, judge: ContradictionJudge, scope: Scope, outcomes: Sequence[Outcome], *,
                   actor: str) -> list[Outcome]:
    """Ask about each created fact and supersede what the model names; the outcomes with those ids
    added to their ``superseded`` (a created fact that closed some becomes ``superseded``). A fact that
    arrived late (its ``uncertain_newer``: records newer than it the judge was unsure of) is shown to
    the model as the older of the pair, each newer record in time order, and stored closed by the
    first the model says makes it untrue. The caller holds the subject's lock."""
    closed: list[str] = []
    now = deps.clock.now()
    batch = {o.memory.id for o in outcomes}  # facts written together are consistent by construction
    out = []
    for o in outcomes:
        if o.action == "merged" or o.memory.kind is not Kind.FACT or o.memory.status is not Status.ACTIVE:
            out.append(o)
            continue
        o = _late(deps, judge, scope, o, batch | set(closed), now=now, actor=actor)
        if not o.uncertain or o.memory.status is not Status.ACTIVE:
            out.append(o)
            continue
        neighbours = [m for m in _uncertain(deps, scope, o.uncertain) if m.id not in closed and m.id not in batch]
        named = set(judge.obsolete(o.memory.pseudo_text, [(m.id, m.pseudo_text) for m in neighbours],
                                   locale=deps.locale)) if neighbours else set()
        gone = [m for m in neighbours if m.id in named]
        unnamed = [m for m in neighbours if m.id not in named]
        kept = [s for m, s in ((m, m.settled(by=o.memory.id)) for m in unnamed) if s is not m]
        if kept:  # the model says they stay true: no longer ranked after the note (only those it had marked)
            deps.index.replace_payload(scope, kept)
        if not gone:
            out.append(o)
            continue
        at = max(o.memory.valid_from, *(m.valid_from for m in gone))
        deps.index.replace_payload(scope, [m.superseded(by=o.memory.id, at=at) for m in gone])
        deps.catalog.append_history(scope, [HistoryEntry(m.id, now, "superseded", actor,
                                                         {"by": o.memory.id, "rule": "llm"}) for m in gone])
        closed.extend(m.id for m in gone)
        out.append(replace(o, action="superseded" if o.action == "created" else o.action,
                           superseded=o.superseded + tuple(m.id for m in gone), reason=o.reason or "llm"))
    return out


def _late(deps: JudgeNeeds, judge: ContradictionJudge, scope: Scope, o: Outcome, skip: set[str], *, now: datetime,
          actor: str) -> Outcome:
    """The late fact closed by the first newer record (in time order) the model names as making it untrue."""
    if not o.uncertain_newer:
        return o
    newer = sorted((m for m in _uncertain(deps, scope, o.uncertain_newer) if m.id not in skip),
                   key=lambda m: m.valid_from)
    for m in newer:
        if o.memory.id in judge.obsolete(m.pseudo_text, [(o.memory.id, o.memory.pseudo_text)], locale=deps.locale):
            record = o.memory.superseded(by=m.id, at=max(m.valid_from, o.memory.valid_from))
            deps.index.replace_payload(scope, [record])
            deps.catalog.append_history(scope, [HistoryEntry(record.id, now, "superseded", actor,
                                                             {"by": m.id, "rule": "llm"})])
            return replace(o, memory=record, reason=o.reason or "llm")
    settled = o.memory.settled()  # no newer record replaces it, the model says: no longer ranked after them
    if settled is not o.memory:
        deps.index.replace_payload(scope, [settled])
    return replace(o, memory=settled)


def supersede_obsolete(deps: JudgeNeeds, judge: ContradictionJudge, scope: Scope, outcomes: Sequence[Outcome], *,
                       actor: str) -> list[str]:
    """``judge_outcomes``, answering only the ids it superseded (the intake worker's use)."""
    judged = judge_outcomes(deps, judge, scope, outcomes, actor=actor)
    return [i for before, after in zip(outcomes, judged, strict=True) for i in after.superseded
            if i not in before.superseded]


def _uncertain(deps: JudgeNeeds, scope: Scope, ids: Sequence[str]) -> list[Memory]:
    """The live facts the judge was unsure of, with their pseudonymised texts."""
    found = deps.index.get(scope, list(ids))
    return [m for m in deps.index.reveal(scope, found, pseudo_text=True)
            if m.kind is Kind.FACT and m.status is Status.ACTIVE]
