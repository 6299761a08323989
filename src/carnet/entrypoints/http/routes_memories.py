"""Remember, list, get, rectify, restore, forget, history and search, under ``/api/v1/subjects/{subject_id}``.

Every route goes through the facade (roles, special-category policy, audit)."""

from __future__ import annotations

from typing import Annotated, Literal
from uuid import UUID

from fastapi import APIRouter, Body, Header, Path, Query, Response

from carnet.domain.idempotency import request_key
from carnet.domain.reconcile.values import IdempotencyKey, Label
from carnet.domain.records import Kind, Source, Status
from carnet.entrypoints.http.auth import Api, Who
from carnet.entrypoints.http.presented import presented
from carnet.entrypoints.http.schemas import (
    LookupBody,
    RectifyBody,
    RememberBatch,
    RememberOne,
    RestoreBody,
    SearchBody,
)
from carnet.entrypoints.presenters.memories import (
    HistoryOut,
    ItemsOut,
    MemoryOut,
    PageOut,
    history_out,
    items_out,
    memory_out,
    page_out,
)
from carnet.entrypoints.presenters.remember import RememberOut, remember_out
from carnet.entrypoints.presenters.search import SearchOut, search_out
from carnet.services.memories import recall
from carnet.services.memories.remember import NewMemory
from carnet.services.rights.rectify import Correction

router = APIRouter(prefix="/api/v1/subjects/{subject_id}", tags=["memories"])

SubjectId = Annotated[str, Path(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9][A-Za-z0-9._:@\-]*$")]
IdempotencyHeader = Annotated[IdempotencyKey | None, Header()]


def _new(one: RememberOne, key: str | None, index: int | None) -> NewMemory:
    """``index`` is the item's place in a batch (None: a single memory). The record id comes from
    ``request_key("api", key, index)``, so a single ``k:1`` and item 1 of a batch ``k`` never meet;
    the source keeps the caller's spelling (``k``, or ``k:1`` for item 1), sealed."""
    if key is None:
        return NewMemory(text=one.text, kind=one.kind, occurred_at=one.occurred_at, importance=one.importance,
                         category=one.category, tags=tuple(one.tags), retention=one.retention,
                         session_id=one.session_id)
    shown = key if index is None else f"{key}:{index}"
    return NewMemory(
        text=one.text, kind=one.kind, occurred_at=one.occurred_at, importance=one.importance,
        category=one.category, tags=tuple(one.tags), retention=one.retention,
        idempotency_key=request_key("api", key, index), sources=(Source("api", shown, one.session_id),),
        session_id=one.session_id, refuse_reuse=True,
    )


@router.post("/memories", status_code=201, response_model=RememberOut, response_model_exclude_unset=True)
def remember_memories(
    subject_id: SubjectId,
    body: RememberOne | RememberBatch,
    who: Who,
    api: Api,
    idempotency_key: IdempotencyHeader = None,
) -> RememberOut:
    """Store one memory or a batch; reconcile says what happened to each (created, merged, superseded).
    The same ``Idempotency-Key`` with the same body replays (``unchanged``); with another body it is
    refused, 422 ``idempotency_key_reused``, and nothing is written."""
    if isinstance(body, RememberBatch):
        news = [_new(one, idempotency_key, i) for i, one in enumerate(body.memories)]
    else:
        news = [_new(body, idempotency_key, None)]
    outcomes = api.remember(who, subject_id=subject_id, items=news)
    return remember_out(outcomes, single=isinstance(body, RememberOne))


@router.get("/memories", response_model=PageOut)
def list_memories(
    subject_id: SubjectId,
    who: Who,
    api: Api,
    kind: Kind | None = None,
    status: Annotated[Status | Literal["any"], Query(description="`any` lists every status")] = Status.ACTIVE,
    category: Annotated[Label | None, Query(max_length=64)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    cursor: Annotated[UUID | None, Query()] = None,
) -> PageOut:
    page = api.list_memories(who, subject_id=subject_id, kind=kind, status=None if status == "any" else status,
                             category=category, limit=limit,
                             cursor=str(cursor) if cursor else None)
    return page_out(page)


@router.post("/memories/lookup", response_model=ItemsOut)
def lookup(subject_id: SubjectId, body: LookupBody, who: Who, api: Api) -> ItemsOut:
    """Exact lookup by identifier through the blind index. A POST so the identifier never sits in a URL
    (proxies and access logs keep URLs)."""
    found = api.lookup(who, subject_id=subject_id, identifier=body.identifier, limit=body.limit,
                       include_superseded=body.include_superseded)
    return items_out(found)


@router.get("/memories/{memory_id}", response_model=MemoryOut)
def get_memory(subject_id: SubjectId, memory_id: UUID, who: Who, api: Api) -> MemoryOut:
    return memory_out(api.get_memory(who, subject_id=subject_id, memory_id=str(memory_id)))


@router.patch("/memories/{memory_id}", response_model=MemoryOut)
def rectify_memory(subject_id: SubjectId, memory_id: UUID, body: RectifyBody, who: Who, api: Api) -> MemoryOut:
    """Rectification (GDPR art. 16, role ``dpo``): a new text is pseudonymised, embedded and sealed
    again; history records which fields changed, never their values."""
    correction = Correction(text=body.text, category=body.category, importance=body.importance,
                            tags=tuple(body.tags) if body.tags is not None else None,
                            occurred_at=body.occurred_at, retention=body.retention)
    return memory_out(api.rectify(who, subject_id=subject_id, memory_id=str(memory_id), correction=correction))


@router.post("/memories/{memory_id}/restore", response_model=MemoryOut, responses={
    409: {"description": "`not_superseded`: the record is not superseded (active, expired), nothing to undo."}})
def restore_memory(subject_id: SubjectId, memory_id: UUID, who: Who, api: Api,
                   body: Annotated[RestoreBody | None, Body()] = None) -> MemoryOut:
    """Restore a superseded record (roles ``supervisor`` or ``dpo``): a person says the newer note did not
    make it untrue. It is active again, the newer record no longer closes it, both histories say so
    (who, never the reason's words). Where the tenant keeps corrections, the pair is kept sealed as a
    label for retraining the judge, and erased with the member."""
    done = api.restore(who, subject_id=subject_id, memory_id=str(memory_id), reason=body.reason if body else None)
    return memory_out(done.memory)


@router.delete("/memories/{memory_id}", status_code=204)
def forget_memory(subject_id: SubjectId, memory_id: UUID, who: Who, api: Api) -> Response:
    """Delete one record physically (roles ``agent`` or ``dpo``); its history keeps metadata only."""
    api.forget(who, subject_id=subject_id, memory_id=str(memory_id))
    return Response(status_code=204)


@router.get("/memories/{memory_id}/history", response_model=HistoryOut)
def get_history(subject_id: SubjectId, memory_id: UUID, who: Who, api: Api) -> HistoryOut:
    """What happened to a record (role ``dpo``): created, merged, superseded, rectified… with who and when."""
    entries = api.history(who, subject_id=subject_id, memory_id=str(memory_id))
    return history_out(entries)


@router.post("/search", response_model=SearchOut)
def search(subject_id: SubjectId, body: SearchBody, who: Who, api: Api) -> Response:
    q = recall.Query(text=body.query, k=body.k, kinds=tuple(body.kinds) if body.kinds else None,
                     include_superseded=body.include_superseded, min_relevance=body.min_relevance)
    ranked = api.search(who, subject_id=subject_id, query=q)
    return presented(search_out(ranked))  # a hot path: serialised once, natively
