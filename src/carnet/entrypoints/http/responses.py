"""Response bodies as the OpenAPI document publishes them. Hot paths still build their JSON by hand
(``memory_json``, ``ranked_json``) and return it ready: these models document the shape, and the
schemathesis test checks every answer against them, so the document cannot drift from the code."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from carnet.domain.records import Kind, Status


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


class OutcomeOut(BaseModel):
    action: Literal["created", "merged", "superseded", "unchanged"]
    memory: MemoryOut
    merged_into: str | None
    superseded: list[str]
    rule: str


class RememberOut(BaseModel):
    """A batch answers ``results`` and the id lists; a single memory also has its outcome's fields at the top."""

    results: list[OutcomeOut]
    created: list[str]
    merged: list[str]
    superseded: list[str]
    action: str | None = None
    memory: MemoryOut | None = None
    merged_into: str | None = None
    rule: str | None = None


class PageOut(BaseModel):
    items: list[MemoryOut]
    next_cursor: str | None
    unreadable: int = Field(0, description="Records of this page left out because they cannot be read "
                                           "(damaged record or data key); export names them.")


class ItemsOut(BaseModel):
    items: list[MemoryOut]
    unreadable: int = Field(0, description="Records left out because they cannot be read.")


class SignalsOut(BaseModel):
    cosine: float
    relevance: float
    keyword: float
    importance: float
    recency: float
    frequency: float
    confidence: float


class RankedOut(BaseModel):
    memory: MemoryOut
    score: float
    signals: SignalsOut


class SearchOut(BaseModel):
    results: list[RankedOut]
    unreadable: int = Field(0, description="Candidates left out because they cannot be read.")


class ProfileOut(BaseModel):
    memory: MemoryOut
    kinds: list[str] = Field(examples=[["accessibility"]],
                             description="contact, accessibility, vulnerability and/or consent.")


class ConflictOut(BaseModel):
    channel: str = Field(examples=["email"], description="sms, email, phone or post.")
    constraint: str = Field(description="The member's fact refusing that channel, as written.")


class TeamProcedureOut(BaseModel):
    id: str
    text: str
    agent_id: str | None
    queue: str | None
    score: float = Field(description="1.0 when an applies_when keyword is in the query, else the calibrated cosine.")
    conflict: bool = Field(description="It prescribes a channel the member's current profile facts refuse.")
    conflicts: list[ConflictOut]


class ContextOut(BaseModel):
    profile: list[ProfileOut] = Field(default_factory=list, description=(
        "The subject's current facts about how to reach and treat them, whatever the query; not repeated "
        "in memories."))
    memories: list[RankedOut]
    episodes: list[RankedOut]
    procedures: list[RankedOut]
    team_procedures: list[TeamProcedureOut] = Field(default_factory=list, description=(
        "The team's approved procedures the query calls for (never a proposed, rejected or retired one)."))
    prompt: str = Field(examples=["## Ce que l'on sait du membre\n- (10 juin 2024) Le membre habite …"])
    stats: dict[str, float | int]


class HistoryEntryOut(BaseModel):
    at: str
    action: str = Field(examples=["superseded"])
    actor: str
    detail: dict[str, str]


class HistoryOut(BaseModel):
    history: list[HistoryEntryOut]


class ReceiptOut(BaseModel):
    tenant: str
    subject_hash: str
    at: str
    records_deleted: int
    catalog_rows_deleted: int
    data_key_destroyed: bool
    verified: dict[str, bool]
    complete: bool
    residue: list[str] = Field(default_factory=list, description=(
        "What erasure could not remove: record ids still found, or `data_key` if the key store refused."))
    unreadable_deleted: int = Field(0, description="Records deleted by id although they could not be decoded.")


class ApiKeyOut(BaseModel):
    key_id: str = Field(examples=["3f9a0c1d2e4b"])
    tenant: str
    roles: list[str]
    created_at: str
    revoked: bool
    rate_limit: str | None
    name: str | None


class NewApiKeyOut(ApiKeyOut):
    key: str = Field(description="The API key itself: shown in this answer only.")


class ApiKeysOut(BaseModel):
    items: list[ApiKeyOut]


class ProblemOut(BaseModel):
    seq: int
    reason: Literal["altered", "missing", "broken_link", "not_in_head", "wrong_tenant"]


class VerdictOut(BaseModel):
    tenant: str
    entries: int
    ok: bool
    problems: list[ProblemOut]


class RetentionOut(BaseModel):
    legal_hold: bool
    hold_since: str | None
    hold_reference: str | None
    relationship_end: str | None


class MaintainTenantOut(BaseModel):
    subjects: int
    held: int
    failed: int
    deleted: dict[str, int]


class MaintainOut(BaseModel):
    started_at: str
    finished_at: str | None
    dry_run: bool
    interrupted: bool
    compacted: bool
    deleted: dict[str, int]
    tenants: dict[str, MaintainTenantOut]


class BackupOut(BaseModel):
    file: str = Field(examples=["carnet-backup-20260501T020000123456Z.tar.gz"])  # in the server's backup dir
    created_at: str
    records: int
    bytes: int
    paused_seconds: float
    seconds: float


class ReadyOut(BaseModel):
    status: Literal["ready", "not_ready"]
    checks: dict[str, str]
