"""An intake as the REST API shows it: accepted (202), then its status."""

from __future__ import annotations

from pydantic import BaseModel, Field

from carnet.domain.intake import Intake, IntakeStatus


class Accepted(BaseModel):
    intake_id: str
    status: IntakeStatus


class IntakeOut(BaseModel):
    intake_id: str
    status: IntakeStatus
    reason: str | None = Field(description="Why it is dead, or why the last attempt failed (a code).")
    memory_ids: list[str]
    attempts: int
    session_id: str | None
    created_at: str
    updated_at: str


def accepted_out(i: Intake) -> Accepted:
    return Accepted(intake_id=i.id, status=i.status)


def intake_out(i: Intake) -> IntakeOut:
    return IntakeOut(intake_id=i.id, status=i.status, reason=i.reason, memory_ids=list(i.memory_ids),
                     attempts=i.attempts, session_id=i.session_id, created_at=i.created_at.isoformat(),
                     updated_at=i.updated_at.isoformat())
