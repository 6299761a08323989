"""Remember: validate, embed in one batch, reconcile against the subject's records, write.

Order of writes (so a failure never leaves a half-applied batch visible as "done"): new points are
upserted first, then the records they merge into or supersede are rewritten, then history is appended.
A replay of the same batch finds every id already stored and changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from carnet.domain.embedding_text import embedding_text
from carnet.domain.idempotency import canonical
from carnet.domain.linking import linking_references
from carnet.domain.pii.special import special_categories
from carnet.domain.profile import is_profile
from carnet.domain.reconcile.decide import Action, Incoming, Memo, ReconcileThresholds, decide
from carnet.domain.reconcile.summaries import restates
from carnet.domain.reconcile.topics import keyword_text
from carnet.domain.reconcile.values import DATETIME_MESSAGE, TEXT_MESSAGE, in_range, is_clean
from carnet.domain.records import HistoryEntry, Kind, Memory, Scope, Source, Status, point_id
from carnet.domain.text import normalize
from carnet.errors import IdempotencyKeyReused, InvalidInput
from carnet.ports import IndexedMemory, SubjectHasher, Vector
from carnet.services import pii
from carnet.services.memories import neighbours
from carnet.services.needs import RememberNeeds
from carnet.services.scope import scope_for


@dataclass(frozen=True, slots=True)
class NewMemory:
    text: str
    kind: Kind = Kind.FACT
    occurred_at: datetime | None = None
    importance: float | None = None
    category: str | None = None
    tags: tuple[str, ...] = ()
    retention: str | None = None
    idempotency_key: str | None = None
    sources: tuple[Source, ...] = ()
    context: str | None = None  # embedded with the text, never stored as provenance
    session_id: str | None = None
    agent_id: str | None = None
    # With an idempotency key: keep a keyed fingerprint of this item, and refuse (IdempotencyKeyReused)
    # a replay under the same key whose item differs. Entrypoints that take a caller's key set it.
    refuse_reuse: bool = False


@dataclass(frozen=True, slots=True)
class Outcome:
    """What reconcile did with one input: ``created``, ``merged``, ``superseded`` or ``unchanged``."""

    action: str
    memory: Memory
    merged_into: str | None = None
    superseded: tuple[str, ...] = ()
    reason: str = ""
    uncertain: tuple[str, ...] = ()  # candidates the judge left to an LLM (``judge.judge_outcomes``)
    uncertain_newer: tuple[str, ...] = ()  # newer records that may make this (late) fact untrue: the LLM's too


@dataclass(slots=True)
class _Batch:
    """Working state of one call: records to insert and stored records to rewrite."""

    new: dict[str, IndexedMemory] = field(default_factory=dict)
    changed: dict[str, Memory] = field(default_factory=dict)
    history: list[HistoryEntry] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)
    readings: Memo = field(default_factory=dict)  # reconcile's parsed texts, for this call only
    subject_id: str = ""  # as the caller named it: its own reference links none of its records (``_build``)


def remember(deps: RememberNeeds, *, tenant: str, subject_id: str, items: Sequence[NewMemory],
             actor: str) -> list[Outcome]:
    _validate(deps, tenant, items)
    scope = scope_for(deps, tenant, subject_id)
    now = deps.clock.now()
    with deps.locks.for_scope(scope):
        # Under the lock: an erasure (here or in another process) cannot slip between it and the write.
        deps.subjects.ensure(scope, subject_id)  # first write: the id is kept sealed, for a future rehash
        ids = [_id_for(deps, scope, item) for item in items]
        prints = [_fingerprint(deps, tenant, item) for item in items]
        aliases = deps.catalog.resolve_aliases(scope, list(dict.fromkeys(ids)))
        wanted = list(dict.fromkeys([aliases.get(i, i) for i in ids]))
        stored = {m.id: m for m in deps.index.get(scope, wanted)}
        seen = {i for i in ids if aliases.get(i, i) in stored}
        for i, fp in zip(ids, prints, strict=True):
            if fp is not None and i in seen:
                _check_replay(stored[aliases.get(i, i)], i, fp)
        fresh = [(i, replace(item, sources=_requested(item, i, fp)) if fp else item)
                 for i, item, fp in zip(ids, items, prints, strict=True) if i not in seen]
        prepared = _pseudonymize(deps, scope, fresh)
        vectors = _embed(deps, fresh, prepared, now)
        batch = _Batch(subject_id=subject_id)
        outcomes: dict[str, Outcome] = {}
        for (mid, item), vec in zip(fresh, vectors, strict=True):
            if mid in batch.new or mid in outcomes:
                continue  # the same item twice in one request
            outcomes[mid] = _reconcile_one(deps, scope, batch, mid, item, prepared[mid], vec, now, actor)
        _write(deps, scope, batch)
    return [outcomes.get(i) or Outcome("unchanged", stored[aliases.get(i, i)]) for i in ids]


def insert_new(deps: RememberNeeds, *, tenant: str, subject_id: str, items: Sequence[NewMemory], actor: str) -> int:
    """Store ``items`` as ``remember`` creates a record that has no neighbour: the same validation, id,
    pseudonymisation (the subject's map), embedding, record, keyword vector, sealing, upsert and
    ``created`` history entry, but no reconcile (no neighbour is searched, nothing merges or supersedes)
    and no replay check (an id already stored is rewritten). For building large benchmark stores
    (``carnet bench latency --text-pool``) whose items the caller knows to be new and distinct; no
    entrypoint calls it. Returns the number of records written."""
    _validate(deps, tenant, items)
    scope = scope_for(deps, tenant, subject_id)
    now = deps.clock.now()
    with deps.locks.for_scope(scope):
        deps.subjects.ensure(scope, subject_id)
        by_id: dict[str, NewMemory] = {}
        for item in items:
            by_id.setdefault(_id_for(deps, scope, item), item)  # the same item twice: written once
        fresh = list(by_id.items())
        prepared = _pseudonymize(deps, scope, fresh)
        vectors = _embed(deps, fresh, prepared, now)
        batch = _Batch(subject_id=subject_id)
        for (mid, item), vec in zip(fresh, vectors, strict=True):
            record = _build(deps, scope, mid, item, prepared[mid], now, own=subject_id)
            incoming = Incoming(text=record.text, pseudo_text=record.pseudo_text, kind=record.kind, id=mid,
                                sources=record.sources, valid_from=record.valid_from)
            _stage_new(deps, scope, batch, record, vec, now, actor, decide(incoming, [], deps.thresholds).reason)
        _write(deps, scope, batch)
    return len(batch.new)


def check_items(deps: RememberNeeds, tenant: str, items: Sequence[NewMemory]) -> None:
    """What ``remember`` refuses (``InvalidInput``), checked without writing anything: the facade's
    door runs it before the write's audit entry."""
    _validate(deps, tenant, items)


def _validate(deps: RememberNeeds, tenant: str, items: Sequence[NewMemory]) -> None:
    if not items:
        raise InvalidInput("no memory to remember")
    if len(items) > deps.limits.max_batch:
        raise InvalidInput(f"at most {deps.limits.max_batch} memories per request")
    for n, item in enumerate(items):
        if not item.text.strip():
            raise InvalidInput(f"memory {n}: text is empty", index=n)
        if len(item.text) > deps.limits.max_text_chars:
            raise InvalidInput(f"memory {n}: text is longer than {deps.limits.max_text_chars} characters", index=n)
        if item.importance is not None and not 0.0 <= item.importance <= 1.0:
            raise InvalidInput(f"memory {n}: importance must be between 0 and 1", index=n)
        if item.occurred_at is not None and not in_range(item.occurred_at):
            raise InvalidInput(f"memory {n}: occurred_at {DATETIME_MESSAGE}", index=n)
        if not is_clean(item.text):
            raise InvalidInput(f"memory {n}: text {TEXT_MESSAGE}", index=n)
        if item.retention is not None and deps.retention.lookup(tenant, item.retention) is None:
            raise InvalidInput(f"memory {n}: unknown retention class", index=n)


def _id_for(deps: RememberNeeds, scope: Scope, item: NewMemory) -> str:
    """The record id, from a keyed hash of the idempotency key (namespaced by its entrypoint, see
    ``domain/idempotency``) or of the text: an id on disk never lets a key or a text be guessed back."""
    if item.idempotency_key:
        return keyed_id(deps.hasher, scope, item.idempotency_key)
    text = f"{item.kind.value}:{normalize(item.text)}"
    return point_id(scope, "text:" + deps.hasher.request_token(scope.tenant, "id-text:" + text))


def keyed_id(hasher: SubjectHasher, scope: Scope, idempotency_key: str) -> str:
    """The id of the record an idempotency key names (as ``remember`` derives it)."""
    return point_id(scope, "key:" + hasher.request_token(scope.tenant, "id-key:" + idempotency_key))


def _fingerprint(deps: RememberNeeds, tenant: str, item: NewMemory) -> str | None:
    """Keyed hash of the item as asked (canonical JSON), for items whose key must not be reused."""
    if not (item.refuse_reuse and item.idempotency_key):
        return None
    body = canonical({"text": item.text, "kind": item.kind.value, "importance": item.importance,
                      "occurred_at": item.occurred_at.isoformat() if item.occurred_at else None,
                      "category": item.category, "tags": list(item.tags), "retention": item.retention,
                      "session_id": item.session_id})
    return deps.hasher.request_token(tenant, "body:" + body)


def _check_replay(record: Memory, request: str, fingerprint: str) -> None:
    """A replay answers the stored record, unless the key's first request had another body. A record
    that keeps no fingerprint for the request (written before fingerprints were kept) replays."""
    kept = {s.fingerprint for s in record.sources if s.request == request and s.fingerprint}
    if kept and fingerprint not in kept:
        raise IdempotencyKeyReused()


def _requested(item: NewMemory, request: str, fingerprint: str) -> tuple[Source, ...]:
    """The item's provenance, each source naming the request and its fingerprint (kept sealed)."""
    sources = item.sources or (Source("api", request, item.session_id),)
    return tuple(replace(s, request=request, fingerprint=fingerprint) for s in sources)


@dataclass(frozen=True, slots=True)
class _Prepared:
    text: pii.Prepared
    context: str | None  # the context, pseudonymised too: it is embedded with the text


def _pseudonymize(deps: RememberNeeds, scope: Scope, fresh: list[tuple[str, NewMemory]]) -> dict[str, _Prepared]:
    """Texts and their contexts in one batch through the detector, with the subject's map."""
    texts = [item.text for _, item in fresh]
    contexts = [item.context for _, item in fresh if item.context]
    done = pii.for_write(deps.pii, scope, texts + contexts)
    ctx = iter(done[len(texts):])
    return {mid: _Prepared(p, next(ctx).pseudo_text if item.context else None)
            for (mid, item), p in zip(fresh, done[: len(texts)], strict=True)}


def _embed(deps: RememberNeeds, fresh: list[tuple[str, NewMemory]], prepared: dict[str, _Prepared],
           now: datetime) -> Vector:
    texts = [passage_text(deps, item, prepared[mid].text.pseudo_text, prepared[mid].context, now)
             for mid, item in fresh]
    return deps.embedder.embed_passages(texts)


def passage_text(deps: RememberNeeds, item: NewMemory, pseudo_text: str, context: str | None, now: datetime) -> str:
    """What is embedded for ``item``: its pseudonymised text (never the original), its date, its
    (pseudonymised) context."""
    return embedding_text(pseudo_text, at=(item.occurred_at or now) if deps.embed_dates else None,
                          locale=deps.locale, context=context)


def _build(deps: RememberNeeds, scope: Scope, mid: str, item: NewMemory, prepared: _Prepared, now: datetime, *,
           own: str) -> Memory:
    """The record to store; ``own``: the subject's id (``linking.linking_references``)."""
    valid_from = item.occurred_at or now
    retention = deps.retention.classes(scope.tenant)[item.retention or "default"]
    special = special_categories(item.text)
    return Memory(
        id=mid,
        scope=scope,
        kind=item.kind,
        text=item.text,
        pseudo_text=prepared.text.pseudo_text,
        recorded_at=now,
        valid_from=valid_from,
        updated_at=now,
        category=item.category,
        tags=item.tags,
        importance=0.5 if item.importance is None else item.importance,
        expires_at=deps.special.expires_at(scope.tenant, special, valid_from, retention.expires_at(valid_from)),
        retention=retention.name,
        sources=item.sources or (Source("api", mid, item.session_id),),
        agent_id=item.agent_id,
        session_id=item.session_id,
        blind_index=deps.hasher.blind_tokens(scope.tenant, [*linking_references(item.text, own),
                                                            *prepared.text.identifiers]),
        special=special,
        profile=item.kind is Kind.FACT and is_profile(item.text),
    )


def _reconcile_one(deps: RememberNeeds, scope: Scope, batch: _Batch, mid: str, item: NewMemory, prepared: _Prepared,
                   vec: Vector, now: datetime, actor: str) -> Outcome:
    record = _build(deps, scope, mid, item, prepared, now, own=batch.subject_id)
    candidates = neighbours.nearest(deps, scope, record, vec, now, pending=batch.new, changed=batch.changed)
    incoming = Incoming(text=record.text, pseudo_text=record.pseudo_text, kind=record.kind, id=mid,
                        sources=record.sources, valid_from=record.valid_from, tokens=record.blind_index,
                        subject_id=batch.subject_id)
    decision = decide(incoming, candidates, _thresholds_for(deps, item), memo=batch.readings,
                      judge=deps.supersession)
    if decision.action is Action.UNCHANGED and decision.target is not None:
        return Outcome("unchanged", _resolve(batch, decision.target, candidates), reason=decision.reason)
    if decision.action is Action.MERGE and decision.target is not None:
        target = _resolve(batch, decision.target, candidates)
        merged = target.reinforced(at=now, sources=record.sources)
        _stage_change(batch, merged)
        batch.aliases[mid] = target.id
        batch.history.append(HistoryEntry(target.id, now, "merged", actor, {"from": mid, "rule": decision.reason}))
        return Outcome("merged", merged, merged_into=target.id, reason=decision.reason)
    if decision.superseded_by is not None:  # a late note: a newer record already says what is true now
        newer = _resolve(batch, decision.superseded_by, candidates)
        record = record.superseded(by=newer.id, at=max(newer.valid_from, record.valid_from))
    # The judge was unsure (``domain.contested``): the most probable of the band's pairs it contests is ranked
    # after the newer note, not closed; a late note by the newer record, the other way round.
    if decision.contest_newer is not None:
        record = record.contested(by=decision.contest_newer)
    _stage_new(deps, scope, batch, record, vec, now, actor, decision.reason)
    if decision.contest is not None:
        _stage_change(batch, _resolve(batch, decision.contest, candidates).contested(by=mid))
    if record.superseded_by is not None:
        batch.history.append(HistoryEntry(mid, now, "superseded", actor,
                                          {"by": record.superseded_by, "rule": decision.reason}))
    closed: tuple[str, ...] = ()
    if decision.action is Action.SUPERSEDE:
        closed = _supersede(batch, decision.superseded, candidates, by=mid, at=record.valid_from,
                            now=now, actor=actor, rule=decision.reason)
        _close_summaries(deps, scope, batch, closed, by=mid, at=record.valid_from, now=now, actor=actor)
    return Outcome("superseded" if closed else "created", record, superseded=closed, reason=decision.reason,
                   uncertain=decision.uncertain, uncertain_newer=decision.uncertain_newer)


def _stage_new(deps: RememberNeeds, scope: Scope, batch: _Batch, record: Memory, vec: Vector, now: datetime, actor: str,
               rule: str) -> None:
    """A created record: its keyword vector (from ``pseudo_text``) and its history entry."""
    sparse = deps.sparse.encode_document(scope, keyword_text(record.pseudo_text))
    batch.new[record.id] = IndexedMemory(record, vec, sparse)
    batch.history.append(HistoryEntry(record.id, now, "created", actor, {"rule": rule}))


def _supersede(batch: _Batch, ids: Sequence[str], candidates: Sequence[tuple[Memory, float]], *, by: str,
               at: datetime, now: datetime, actor: str, rule: str) -> tuple[str, ...]:
    closed = []
    for old_id in ids:
        if old_id == by:
            continue
        old = _resolve(batch, old_id, candidates)
        _stage_change(batch, old.superseded(by=by, at=max(at, old.valid_from)))
        batch.history.append(HistoryEntry(old_id, now, "superseded", actor, {"by": by, "rule": rule}))
        closed.append(old_id)
    return tuple(closed)


def _close_summaries(deps: RememberNeeds, scope: Scope, batch: _Batch, closed: Sequence[str], *, by: str,
                     at: datetime, now: datetime, actor: str) -> None:
    """The summaries of the calls the closed facts were read from, when they restate one of them
    (``reconcile.summaries``), closed by the same note. A call's summary is found by the id its intake
    gave it (``intake:<id>:episode``): no search, one read, and only when something was closed."""
    wanted: dict[str, list[str]] = {}  # a summary's id → the texts of its call's closed facts
    for m in (_resolve(batch, i) for i in closed):
        for s in m.sources if m.kind is Kind.FACT else ():
            if s.kind == "intake":
                wanted.setdefault(keyed_id(deps.hasher, scope, f"intake:{s.ref}:episode"), []).append(m.text)
    if not wanted:
        return
    pending = {i: _resolve(batch, i) for i in wanted if i in batch.changed or i in batch.new}
    stored = deps.index.get(scope, [i for i in wanted if i not in pending])
    for summary in [*pending.values(), *stored]:
        restated = any(restates(summary.text, text) for text in wanted[summary.id])
        if summary.kind is Kind.EPISODE and summary.status is Status.ACTIVE and restated:
            _stage_change(batch, summary.superseded(by=by, at=max(at, summary.valid_from)))
            batch.history.append(HistoryEntry(summary.id, now, "superseded", actor,
                                              {"by": by, "rule": "the call's summary restates a closed fact"}))


def _thresholds_for(deps: RememberNeeds, item: NewMemory) -> ReconcileThresholds:
    """Cosines are calibrated between records embedded alike. A record embedded with context (its
    neighbouring turns) resembles those neighbours, not the facts they state: for it, only the
    word-level rules (Jaccard, exact) merge, and cosine never does."""
    if not item.context:
        return deps.thresholds
    return replace(deps.thresholds, cosine_dup=1.0)


def _resolve(batch: _Batch, mid: str, candidates: Sequence[tuple[Memory, float]] = ()) -> Memory:
    if mid in batch.changed:
        return batch.changed[mid]
    if mid in batch.new:
        return batch.new[mid].memory
    for m, _ in candidates:
        if m.id == mid:
            return m
    raise KeyError(mid)


def _stage_change(batch: _Batch, memory: Memory) -> None:
    if memory.id in batch.new:
        pending = batch.new[memory.id]
        batch.new[memory.id] = replace(pending, memory=memory)
    else:
        batch.changed[memory.id] = memory


def _write(deps: RememberNeeds, scope: Scope, batch: _Batch) -> None:
    if batch.new:
        deps.index.upsert(scope, list(batch.new.values()))
    if batch.changed:
        deps.index.replace_payload(scope, list(batch.changed.values()))
    if batch.aliases:
        deps.catalog.add_aliases(scope, batch.aliases)
    if batch.history:
        deps.catalog.append_history(scope, batch.history)
