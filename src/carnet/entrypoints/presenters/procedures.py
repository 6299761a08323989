"""A team procedure as the REST API shows it (with who proposed and decided it)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from carnet.domain.procedures import ProcedureStatus, TeamProcedure


class ProcedureOut(BaseModel):
    id: str
    text: str
    status: ProcedureStatus
    agent_id: str | None
    queue: str | None
    applies_when: list[str]
    proposed_by: str = Field(description='The proposing key id, or "extraction" (read from calls).')
    decided_by: str | None = Field(description="The supervisor key that approved, rejected or retired it last.")
    created_at: str
    updated_at: str


class ProceduresOut(BaseModel):
    items: list[ProcedureOut]


def procedure_out(p: TeamProcedure) -> ProcedureOut:
    return ProcedureOut(id=p.id, text=p.text, status=p.status, agent_id=p.agent_id, queue=p.queue,
                        applies_when=list(p.applies_when), proposed_by=p.proposed_by, decided_by=p.decided_by,
                        created_at=p.created_at.isoformat(), updated_at=p.updated_at.isoformat())


def procedures_out(found: Sequence[TeamProcedure]) -> ProceduresOut:
    return ProceduresOut(items=[procedure_out(p) for p in found])
