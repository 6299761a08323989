"""A record as the API shows it, and the lists of records: no tenant, no subject hash, no vectors."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from pydantic import BaseModel, Field

from carnet.domain.records import HistoryEntry, Kind, Memory, Status
from carnet.domain.unreadable import Found
from carnet.services.memories.reads import Page


class SourceOut(BaseModel):
    kind: str = Field(examples=["api"])
    ref: str
    session_id: str | None


class MemoryOut(BaseModel):
    id: str = Field(examples=["5f0c2b8e-7d1a-5c43-9a0e-2f1b3c4d5e6f"])
    kind: Kind
    text: str = Field(examples=["Le membre habite maintenant à Villeurbanne."])
    status: Status
    category: str | None
    tags: list[str]
    importance: float
    confidence: float
    access_count: int
    reinforcement_count: int
    occurred_at: str | None
    valid_from: str | None
    valid_to: str | None
    recorded_at: str | None
    updated_at: str | None
    last_accessed_at: str | None
    expires_at: str | None
    retention: str
    superseded_by: str | None
    sources: list[SourceOut]
    session_id: str | None
    agent_id: str | None
    special_categories: list[str]


class PageOut(BaseModel):
    items: list[MemoryOut]
    next_cursor: str | None
    unreadable: int = Field(0, description="Records of this page left out because they cannot be read "
                                           "(damaged record or data key); export names them.")


class ItemsOut(BaseModel):
    items: list[MemoryOut]
    unreadable: int = Field(0, description="Records left out because they cannot be read.")


class HistoryEntryOut(BaseModel):
    at: str
    action: str = Field(examples=["superseded"])
    actor: str
    detail: dict[str, str]


class HistoryOut(BaseModel):
    history: list[HistoryEntryOut]


def iso(at: datetime | None) -> str | None:
    return at.isoformat() if at else None


def memory_out(m: Memory) -> MemoryOut:
    return MemoryOut(
        id=m.id, kind=m.kind, text=m.text, status=m.status, category=m.category, tags=list(m.tags),
        importance=m.importance, confidence=round(m.confidence, 4), access_count=m.access_count,
        reinforcement_count=m.reinforcement_count, occurred_at=iso(m.valid_from), valid_from=iso(m.valid_from),
        valid_to=iso(m.valid_to), recorded_at=iso(m.recorded_at), updated_at=iso(m.updated_at),
        last_accessed_at=iso(m.last_accessed_at), expires_at=iso(m.expires_at), retention=m.retention,
        superseded_by=m.superseded_by,
        sources=[SourceOut(kind=s.kind, ref=s.ref, session_id=s.session_id) for s in m.sources],
        session_id=m.session_id, agent_id=m.agent_id, special_categories=list(m.special))


def page_out(page: Page) -> PageOut:
    return PageOut(items=[memory_out(m) for m in page.items], next_cursor=page.next_cursor,
                   unreadable=len(page.unreadable))


def items_out(found: Found[Memory]) -> ItemsOut:
    return ItemsOut(items=[memory_out(m) for m in found], unreadable=len(found.unreadable))


def history_entry_out(e: HistoryEntry) -> HistoryEntryOut:
    return HistoryEntryOut(at=e.at.isoformat(), action=e.action, actor=e.actor, detail=e.detail)


def history_out(entries: Sequence[HistoryEntry]) -> HistoryOut:
    return HistoryOut(history=[history_entry_out(e) for e in entries])
