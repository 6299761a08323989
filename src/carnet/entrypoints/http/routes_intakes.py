"""Raw conversation messages in (202 at once), and the intake's status out.

``POST …/messages`` stores the messages durably and sealed, and answers before any extraction: the
assistant never waits on the LLM. ``GET /intakes/{id}?wait=true`` holds (bounded) until the intake is
done or dead, for callers that want to read their own writes."""

from __future__ import annotations

import time
from typing import Annotated, Literal
from uuid import UUID

import anyio
from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from carnet.domain.intake import Intake, IntakeStatus, Message
from carnet.domain.reconcile.values import Instant, Seconds, Text
from carnet.entrypoints.http.auth import Api, Who
from carnet.entrypoints.http.routes_memories import IdempotencyHeader, SubjectId
from carnet.entrypoints.http.schemas import SessionId
from carnet.entrypoints.presenters.intakes import Accepted, IntakeOut, accepted_out, intake_out
from carnet.services.apikeys import Principal
from carnet.services.facade import Facade

router = APIRouter(prefix="/api/v1", tags=["intakes"])

_POLL_SECONDS = 0.05


class MessageIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant", "advisor", "system"]
    content: Text
    at: Instant | None = None


class MessagesBody(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{
        "session_id": "call-2026-11-29-0042",
        "messages": [
            {"role": "user", "content": "Bonjour, j'ai un dégât des eaux dans ma cuisine depuis hier.",
             "at": "2026-11-29T09:12:00+01:00"},
            {"role": "advisor", "content": "Je déclare le sinistre, un expert passera jeudi.",
             "at": "2026-11-29T09:13:00+01:00"}]}]})

    session_id: SessionId | None = None
    messages: list[MessageIn] = Field(min_length=1, max_length=200)


@router.post("/subjects/{subject_id}/messages", status_code=202, response_model=Accepted)
def submit_messages(subject_id: SubjectId, body: MessagesBody, who: Who, api: Api,
                    idempotency_key: IdempotencyHeader = None) -> Accepted:
    """Queue messages for extraction (role ``agent``). The same ``Idempotency-Key`` for the same
    subject returns the intake already queued instead of a second one. The posts of one ``session_id``
    are read as one call: each after the session's earlier messages (kept sealed for
    ``CARNET_WORKERS__SESSION_CONTEXT_MINUTES``), so a call may be posted exchange by exchange."""
    found = api.submit_messages(who, subject_id=subject_id, session_id=body.session_id,
                                messages=[Message(m.role, m.content, m.at) for m in body.messages],
                                idempotency_key=idempotency_key)
    return accepted_out(found)


@router.get("/intakes/{intake_id}", response_model=IntakeOut)
async def intake_status(intake_id: UUID, who: Who, api: Api, wait: bool = False,
                        timeout: Annotated[Seconds | None, Query(le=60)] = None) -> IntakeOut:
    """pending, processing, done (with the memory ids) or dead (with a reason). With ``wait=true``,
    answers once it is done or dead, or after ``timeout`` seconds (bounded by the server)."""
    current = await anyio.to_thread.run_sync(_status, api, who, str(intake_id))
    if wait:
        limit = api.wait_max_seconds if timeout is None else min(timeout, api.wait_max_seconds)
        deadline = time.monotonic() + limit
        while current.status in (IntakeStatus.PENDING, IntakeStatus.PROCESSING) and time.monotonic() < deadline:
            await anyio.sleep(_POLL_SECONDS)
            current = await anyio.to_thread.run_sync(_status, api, who, str(intake_id))
    return intake_out(current)


def _status(api: Facade, who: Principal, intake_id: str) -> Intake:
    return api.intake_status(who, intake_id=intake_id)
