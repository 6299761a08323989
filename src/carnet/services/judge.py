"""The LLM's contradiction judgment, after reconcile's rules: which of the subject's older facts a
fact just learnt from a conversation makes obsolete.

Reconcile's rules (slots, values, overlaps) decide what they can recognise first. A model sees further ("the
member sold the car" makes "the member drives a 208" obsolete), so when the extractor can judge, each
fact an intake created is shown, with the subject's nearest live facts, to ``Extractor.obsolete``;
those it names are superseded (rule ``llm``). The model sees placeholders only (``pseudo_text``), and
only ids it was given can come back. Rules-only extractors return nothing and this costs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from carnet.domain.embedding_text import query_text
from carnet.domain.records import HistoryEntry, Kind, Memory, Scope, Status
from carnet.ports import Extractor, RecordFilter
from carnet.services.deps import Deps
from carnet.services.remember import Outcome

NEIGHBOURS = 6


def supersede_obsolete(deps: Deps, extractor: Extractor, scope: Scope, outcomes: Sequence[Outcome], *,
                       actor: str) -> list[str]:
    """Ask about each created fact and supersede what the model names; the ids superseded. The caller
    holds the subject's lock."""
    closed: list[str] = []
    now = deps.clock.now()
    batch = {o.memory.id for o in outcomes}  # facts extracted together are consistent by construction
    for o in outcomes:  # "unchanged" too: a retry judges again what a failed attempt could not
        if o.action == "merged" or o.memory.kind is not Kind.FACT or o.memory.status is not Status.ACTIVE:
            continue
        neighbours = [m for m in _neighbours(deps, scope, o.memory) if m.id not in closed and m.id not in batch]
        if not neighbours:
            continue
        named = set(extractor.obsolete(o.memory.pseudo_text, [(m.id, m.pseudo_text) for m in neighbours],
                                       locale=deps.locale))
        gone = [m for m in neighbours if m.id in named]
        if not gone:
            continue
        at = max(o.memory.valid_from, *(m.valid_from for m in gone))
        deps.index.replace_payload(scope, [m.superseded(by=o.memory.id, at=at) for m in gone])
        deps.catalog.append_history(scope, [HistoryEntry(m.id, now, "superseded", actor,
                                                         {"by": o.memory.id, "rule": "llm"}) for m in gone])
        closed.extend(m.id for m in gone)
    return closed


def _neighbours(deps: Deps, scope: Scope, fact: Memory) -> list[Memory]:
    """The subject's live facts nearest to ``fact`` (itself excluded), with their pseudonymised texts."""
    qvec = deps.embedder.embed_query(query_text(fact.pseudo_text, locale=deps.locale), tenant=scope.tenant)
    where = RecordFilter(kinds=(Kind.FACT,), statuses=(Status.ACTIVE,), not_expired_at=deps.clock.now())
    hits = deps.index.hybrid_search(scope, dense=qvec, sparse=None, limit=NEIGHBOURS + 1, where=where)
    found = [c.memory for c in hits.dense if c.memory.id != fact.id][:NEIGHBOURS]
    return deps.index.reveal(scope, found, pseudo_text=True)
