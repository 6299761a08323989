"""Search: hybrid retrieval (dense + keyword) inside the subject's scope, then the weighted score.

A candidate that cannot be read back (its payload or ciphertext damaged, its data key damaged) is left
out, counted, and named in the answer's ``unreadable`` (:mod:`carnet.domain.unreadable`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np

from carnet.domain.answer_type import Answer, asked, gives
from carnet.domain.contested import contested_last
from carnet.domain.embedding_text import query_text
from carnet.domain.linking import bring_linked_up, references
from carnet.domain.profile import CONSENT, asks_consent, profile_kinds
from carnet.domain.query_intent import read_intent
from carnet.domain.query_lexicon import expansion
from carnet.domain.records import Kind, Memory, Scope, Status
from carnet.domain.scoring import Signals, Weights, final_score, signals
from carnet.domain.speakers import spoken_by
from carnet.domain.text import content_terms
from carnet.domain.unreadable import Found, Skipped
from carnet.errors import InvalidInput, SubjectNotFound
from carnet.ports import HybridHits, RecordFilter, SparseVector, Vector
from carnet.services import pii
from carnet.services.needs import RecallNeeds
from carnet.services.scope import scope_for


@dataclass(frozen=True, slots=True)
class Ranked:
    memory: Memory
    score: float
    signals: Signals


@dataclass(frozen=True, slots=True)
class Query:
    text: str
    k: int = 10
    kinds: tuple[Kind, ...] | None = None
    include_superseded: bool = False
    min_relevance: float | None = None
    hidden_special: tuple[str, ...] = ()  # special categories the caller may not read (its key's policy)


def search(deps: RecallNeeds, *, tenant: str, subject_id: str, query: Query) -> Found[Ranked]:
    scope = scope_for(deps, tenant, subject_id)
    validate_query(deps, query)
    now = deps.clock.now()
    prepared = pii.for_query(deps.pii, scope, query.text)
    qvec = deps.embedder.embed_query(query_text(prepared.pseudo_text, locale=deps.locale), tenant=scope.tenant)
    skipped: Skipped = []
    spare = SUMMARY_SPARE if query.kinds is None or Kind.EPISODE in query.kinds else 0
    ranked = rank(deps, scope, replace(query, k=min(query.k + spare, deps.limits.max_k)), qvec, now,
                  prepared=prepared, skipped=skipped)
    ranked = without_restated(ranked)[: query.k]
    if not ranked and not skipped:
        ensure_subject_exists(deps, scope)
    deps.access.record(scope, [r.memory.id for r in ranked], now)
    return Found(ranked, deps.unreadable.add("search", skipped))


# A search over facts and call summaries reads this many more records, so that a summary restating the
# facts found can give its place to the next record (``without_restated``).
SUMMARY_SPARE = 3
RESTATED = 0.8  # share of a summary's words that the facts found already say


def without_restated(ranked: list[Ranked]) -> list[Ranked]:
    """``ranked`` (best first, revealed) with the call summaries that only restate the other records
    found moved to the end, in their order: "Appel du 12 janvier : le conseiller ouvre le dossier
    PRV-… ." beside the note of that opening takes the place of an answer the advisor has not seen. The
    summary's heading (up to its first " : ") does not count: it dates the call."""
    said = {t for r in ranked if r.memory.kind is not Kind.EPISODE for t in content_terms(r.memory.text, cache=False)}

    def restated(r: Ranked) -> bool:
        terms = set(content_terms(r.memory.text.partition(" : ")[2] or r.memory.text, cache=False))
        return r.memory.kind is Kind.EPISODE and bool(terms) and len(terms & said) >= RESTATED * len(terms)

    moved = [r for r in ranked if restated(r)]
    return [r for r in ranked if not any(r is m for m in moved)] + moved


def validate_query(deps: RecallNeeds, query: Query) -> None:
    if not query.text.strip():
        raise InvalidInput("query is empty")
    if len(query.text) > deps.limits.max_query_chars:
        raise InvalidInput(f"query is longer than {deps.limits.max_query_chars} characters")
    if not 1 <= query.k <= deps.limits.max_k:
        raise InvalidInput(f"k must be between 1 and {deps.limits.max_k}")
    if query.min_relevance is not None and not 0.0 <= query.min_relevance <= 1.0:
        raise InvalidInput("min_relevance must be between 0 and 1")


def ensure_subject_exists(deps: RecallNeeds, scope: Scope) -> None:
    """Only called when nothing matched, so a known subject costs nothing on the hot path."""
    if deps.index.count(scope, where=RecordFilter(statuses=None)) == 0:
        raise SubjectNotFound()


def rank(deps: RecallNeeds, scope: Scope, query: Query, qvec: Vector, now: datetime,
         candidates: int | None = None, *, prepared: pii.Prepared | None = None, reveal: bool = True,
         skipped: Skipped | None = None, sparse: SparseVector | None = None) -> list[Ranked]:
    """``candidates``: how many records each retriever returns before ranking (settings by default).
    ``prepared``: the query once pseudonymised (``qvec`` is its embedding); identifiers found in it
    are looked up in the blind index and their records come first. ``reveal=False`` leaves the texts
    sealed, for a caller that opens only those it keeps (``reveal_ranked``). ``skipped`` receives the
    candidates that could not be read (they are left out). ``sparse``: the keyword query already
    encoded (``keyword_vector``), for a caller that ranks one question several times."""
    prepared = prepared or pii.Prepared(query.text)
    statuses = None if query.include_superseded else (Status.ACTIVE,)
    where = RecordFilter(kinds=query.kinds, statuses=statuses, hidden_special=query.hidden_special,
                         not_expired_at=None if query.include_superseded else now)
    intent = read_intent(query.text)
    weights = intent.weights(deps.weights)
    hits = deps.index.hybrid_search(
        scope,
        dense=qvec,
        sparse=sparse or keyword_vector(deps, scope, prepared),
        limit=max(candidates or deps.candidates, query.k),
        where=where,
        with_vectors=True,
        skipped=skipped,
    )
    floor = deps.search_min_relevance if query.min_relevance is None else query.min_relevance
    ranked = sorted(score_hits(deps, hits, qvec, now, weights), key=lambda r: r.score, reverse=True)
    wanted = asked(query.text)
    if wanted is not None:
        ranked = lift_answers(deps, scope, ranked, wanted, window=ANSWER_WINDOW, skipped=skipped)
    if prepared.names:
        ranked = lift_speakers(deps, scope, ranked, prepared.names, window=SPEAKER_WINDOW, skipped=skipped)
    top = above_floor(ranked, floor)
    named = exact_identifiers(query.text, prepared)
    first: set[str] = set()
    if named:
        exact = exact_matches(deps, scope, where, named, {r.memory.id: r for r in ranked}, now,
                              limit=EXACT_LOOKUP, skipped=skipped, weights=weights)
        first = {r.memory.id for r in exact}
        top = exact + [r for r in top if r.memory.id not in first]
    top = contested_last(top, lambda r: r.memory)  # the consent statements below stay first whatever contests them
    if asks_consent(query.text) and Kind.FACT in (query.kinds or (Kind.FACT,)):
        consent = consent_records(deps, scope, where, {r.memory.id: r for r in ranked}, now, weights=weights,
                                  skipped=skipped)
        consent = [r for r in consent if r.memory.id not in first]  # the records named by reference stay first
        shown = first | {r.memory.id for r in consent}
        top = [r for r in top if r.memory.id in first] + consent + [r for r in top if r.memory.id not in shown]
    top = top[: query.k]
    return reveal_ranked(deps, scope, top, skipped) if reveal else top


EXACT_LOOKUP = 20  # records read per identifier named in a query, before they are ranked (whatever ``k``)

# A question that asks for an amount or a date (``domain.answer_type``): among its first ANSWER_WINDOW
# candidates, those whose text gives one gain ANSWER_LIFT on the fused score (about the gap between
# neighbouring ranks). Chosen on fr-dev-2.json's call store among 0.03-0.12 (docs/benchmarks.md). The
# windows are fixed, never widened to ``k``: asking for more results never reorders the first ones.
ANSWER_WINDOW = 10
ANSWER_LIFT = 0.08


def lift_answers(deps: RecallNeeds, scope: Scope, ranked: list[Ranked], wanted: Answer, *, window: int,
                 skipped: Skipped | None = None) -> list[Ranked]:
    """``ranked`` (best first) with the first ``window`` opened and those that give a value of the
    type ``wanted`` lifted by ``ANSWER_LIFT``, re-sorted; the rest follow unchanged. Reading the value's
    shape needs the text, so those few records are opened here rather than after the cut."""
    return _lifted(deps, scope, ranked, lambda text: gives(text, wanted), ANSWER_LIFT, window, skipped)


# A question naming a person: among its first SPEAKER_WINDOW candidates, the lines that person said
# ("Melanie: …", ``domain.speakers``) gain SPEAKER_LIFT. Chosen on LoCoMo conv-26 only (0.03-0.2 tried;
# conv-30 and conv-41 held out, docs/benchmarks.md). A call's notes are nobody's lines: unchanged.
SPEAKER_WINDOW = 40
SPEAKER_LIFT = 0.10


def lift_speakers(deps: RecallNeeds, scope: Scope, ranked: list[Ranked], names: Sequence[str], *, window: int,
                  skipped: Skipped | None = None) -> list[Ranked]:
    """``ranked`` (best first) with the first ``window`` opened and the lines said by one of ``names``
    lifted by ``SPEAKER_LIFT``, re-sorted; the rest follow unchanged."""
    return _lifted(deps, scope, ranked, lambda text: spoken_by(text, names), SPEAKER_LIFT, window, skipped)


def _lifted(deps: RecallNeeds, scope: Scope, ranked: list[Ranked], wanted: Callable[[str], bool], lift: float,
            window: int, skipped: Skipped | None) -> list[Ranked]:
    """The first ``window`` of ``ranked`` opened, those whose text is ``wanted`` lifted by ``lift``,
    re-sorted; the rest follow unchanged."""
    head = reveal_ranked(deps, scope, ranked[:window], skipped)
    lifted = [replace(r, score=r.score + lift) if wanted(r.memory.text) else r for r in head]
    return sorted(lifted, key=lambda r: r.score, reverse=True) + ranked[window:]


def keyword_vector(deps: RecallNeeds, scope: Scope, prepared: pii.Prepared) -> SparseVector:
    """The keyword retriever's query vector for a pseudonymised question (``keyword_query``)."""
    return deps.sparse.encode_query(scope, keyword_query(prepared.pseudo_text))


def keyword_query(pseudo_query: str) -> str:
    """What the keyword retriever is asked: the question and the lexicon's other words for what it
    names (``domain.query_lexicon``)."""
    extra = expansion(pseudo_query)
    return f"{pseudo_query} {extra}" if extra else pseudo_query


def exact_identifiers(question: str, prepared: pii.Prepared) -> tuple[str, ...]:
    """Identifiers to look up by blind index: the personal ones pseudonymisation found, and the case
    references (``SIN-2025-071228``, PII-free codes) named in the question, indexed the same way at
    write time (``services.remember``)."""
    refs = sorted(references(question) - set(prepared.identifiers))
    return (*prepared.identifiers, *refs)


def exact_matches(deps: RecallNeeds, scope: Scope, where: RecordFilter, identifiers: Sequence[str],
                  scored: dict[str, Ranked], now: datetime, *, limit: int,
                  skipped: Skipped | None = None, weights: Weights | None = None) -> list[Ranked]:
    """Records whose blind index holds one of ``identifiers`` (an IBAN, a phone, a claim number named
    in the query): found by their keyed token, not by meaning, and put first, best score first.
    ``weights``: the question's ranking weights (the settings' by default)."""
    weights = weights or deps.weights
    found: dict[str, Ranked] = {}
    for token in deps.hasher.blind_tokens(scope.tenant, identifiers):
        records, _ = deps.index.scroll(scope, where=replace(where, blind_token=token), limit=limit,
                                       skipped=skipped)
        for m in records:
            if m.id not in found:
                found[m.id] = _ranked(deps, m, scored, now, keyword=1.0, weights=weights)
    return sorted(found.values(), key=lambda r: r.score, reverse=True)


def _ranked(deps: RecallNeeds, m: Memory, scored: dict[str, Ranked], now: datetime, *, keyword: float,
            weights: Weights) -> Ranked:
    """A record found by another way than the ranked search: its score there if the search had it, else
    fresh signals with no cosine and the ``keyword`` evidence of how it was found."""
    s = scored.get(m.id)
    if s is not None:
        return Ranked(m, s.score, s.signals)
    sig = signals(m, cosine=0.0, keyword=keyword, scale=deps.scale, weights=weights, now=now)
    return Ranked(m, final_score(sig, weights), sig)


CONSENT_LOOKUP = 64  # profile records read for a question asked before an offer (few per subject)
CONSENT_FIRST = 2  # of which the newest consent statements come first


def consent_records(deps: RecallNeeds, scope: Scope, where: RecordFilter, scored: dict[str, Ranked], now: datetime,
                    *, weights: Weights, skipped: Skipped | None = None) -> list[Ranked]:
    """For a question asked before approaching the person with an offer (``domain.profile.asks_consent``):
    the subject's newest records on consent or opposition to marketing, found by the profile flag
    stored at write time, not by meaning ("Puis-je lui proposer notre assurance obsèques ?" shares no
    word with "opposé à tout démarchage")."""
    records = deps.index.newest(scope, where=replace(where, kinds=(Kind.FACT,), profile_only=True),
                                limit=CONSENT_LOOKUP, skipped=skipped)  # the newest, chosen by the engine
    newest = sorted((m for m in records if CONSENT in profile_kinds(m.text)),
                    key=lambda m: (m.valid_from, m.recorded_at), reverse=True)[:CONSENT_FIRST]
    return [_ranked(deps, m, scored, now, keyword=0.0, weights=weights) for m in newest]


def reveal_ranked(deps: RecallNeeds, scope: Scope, ranked: Sequence[Ranked],
                  skipped: Skipped | None = None) -> list[Ranked]:
    """The records opened, in rank order; one that does not open is left out (noted in ``skipped``)."""
    shown = {m.id: m for m in deps.index.reveal(scope, [r.memory for r in ranked], skipped=skipped)}
    return [Ranked(shown[r.memory.id], r.score, r.signals) for r in ranked if r.memory.id in shown]


KEYWORD_EVIDENCE = 0.5


def above_floor(ranked: list[Ranked], floor: float) -> list[Ranked]:
    """Keep what is relevant enough, best first, with records linked to the best one right behind it.

    The floor applies to the relevance signal (calibrated cosine), never to the fused score. Two kinds
    of evidence stand on their own: an exact-term match at least half as strong as the best one (the
    query names something the record names), and a case reference shared with the best record."""

    def passes(r: Ranked) -> bool:
        return r.signals.relevance >= floor or r.signals.keyword >= KEYWORD_EVIDENCE

    kept = [r for r in ranked if passes(r)]
    if not kept:
        return []
    anchor = set(kept[0].memory.blind_index)
    linked = [r for r in ranked if not passes(r) and anchor.intersection(r.memory.blind_index)]
    pool = [kept[0], *sorted(kept[1:] + linked, key=lambda r: r.score, reverse=True)]
    return bring_linked_up(pool, lambda r: r.memory.blind_index)


def score_hits(deps: RecallNeeds, hits: HybridHits, qvec: Vector, now: datetime,
               weights: Weights | None = None) -> list[Ranked]:
    """Union of both retrievers. Every candidate gets a real cosine (computed from its vector when only
    the keyword retriever found it) and a keyword score normalised by the best keyword score.
    ``weights``: the question's ranking weights (the settings' by default)."""
    weights = weights or deps.weights
    cosines: dict[str, float] = {c.memory.id: c.score for c in hits.dense}
    memories: dict[str, Memory] = {c.memory.id: c.memory for c in hits.dense}
    top_kw = max((c.score for c in hits.sparse), default=0.0)
    keyword: dict[str, float] = {}
    for c in hits.sparse:
        keyword[c.memory.id] = c.score / top_kw if top_kw > 0 else 0.0
        if c.memory.id not in cosines:
            memories[c.memory.id] = c.memory
            cosines[c.memory.id] = float(np.dot(c.vector, qvec)) if c.vector is not None else 0.0
    out = []
    for mid, memory in memories.items():
        s = signals(memory, cosine=cosines[mid], keyword=keyword.get(mid, 0.0), scale=deps.scale,
                    weights=weights, now=now)
        out.append(Ranked(memory, final_score(s, weights), s))
    return out
