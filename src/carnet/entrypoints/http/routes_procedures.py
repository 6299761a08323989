"""Team procedures: ``/api/v1/procedures``. Proposed by an ``agent`` or ``supervisor`` key, approved,
rejected or retired by a ``supervisor`` key only; an agent lists the approved ones. Roles, checks and
audit entries are the facade's (``Facade.*_procedure``): nothing is checked or recorded here."""

from __future__ import annotations

from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from carnet.domain.procedures import MAX_KEYWORDS, MAX_TEXT, Decision, ProcedureStatus
from carnet.domain.reconcile.values import Label, Text
from carnet.entrypoints.http.auth import Api, Who
from carnet.entrypoints.http.schemas import Identifier
from carnet.entrypoints.presenters.procedures import ProcedureOut, ProceduresOut, procedure_out, procedures_out
from carnet.services.procedures import Proposal

router = APIRouter(prefix="/api/v1/procedures", tags=["procedures"])


class ProposalBody(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{
        "text": "Pour un dégât des eaux, toujours demander des photos avant d'envoyer l'expert.",
        "queue": "sinistres", "applies_when": ["dégât des eaux", "fuite"]}]})

    text: Annotated[Text, Field(max_length=MAX_TEXT)]
    agent_id: Identifier | None = Field(None, description="Only for this agent (absent: any agent).")
    queue: Identifier | None = Field(None, description="Only for this queue (absent: any queue).")
    applies_when: list[Annotated[Label, Field(max_length=60)]] = Field(
        default_factory=list, max_length=MAX_KEYWORDS,
        description="Keywords of the cases it is about: a query naming one always gets the procedure.")


@router.get("", response_model=ProceduresOut)
def list_procedures(who: Who, api: Api, status: Annotated[ProcedureStatus | None, Query()] = None
                    ) -> ProceduresOut:
    """The tenant's procedures, oldest first. A supervisor sees every status (``status`` filters);
    an agent sees the approved ones only (another ``status`` is 403)."""
    return procedures_out(api.list_procedures(who, status=status))


@router.post("", status_code=201, response_model=ProcedureOut)
def propose(body: ProposalBody, who: Who, api: Api) -> ProcedureOut:
    """Propose a procedure (role ``agent`` or ``supervisor``); it is ``proposed`` and never used by
    ``assemble`` until a supervisor approves it. The same text while still proposed or approved returns
    the existing one. A text with personal data is 400 ``procedure_personal_data``."""
    p = api.propose_procedure(who, proposal=Proposal(body.text, body.agent_id, body.queue, tuple(body.applies_when)))
    return procedure_out(p)


@router.get("/{procedure_id}", response_model=ProcedureOut)
def get_procedure(procedure_id: UUID, who: Who, api: Api) -> ProcedureOut:
    return procedure_out(api.get_procedure(who, procedure_id=str(procedure_id)))


def _decide(decision: Decision, doc: str) -> None:
    def route(procedure_id: UUID, who: Who, api: Api) -> ProcedureOut:
        return procedure_out(api.decide_procedure(who, procedure_id=str(procedure_id), decision=decision))

    route.__doc__ = doc
    router.add_api_route(f"/{{procedure_id}}/{decision.value}", route, methods=["POST"], response_model=ProcedureOut,
                         name=f"{decision.value}_procedure")


_decide(Decision.APPROVE, "Approve a proposed procedure (role ``supervisor``): ``assemble`` uses it from now on. "
                          "Any other status is 409 ``procedure_state``.")
_decide(Decision.REJECT, "Reject a proposed procedure (role ``supervisor``); it is never used.")
_decide(Decision.RETIRE, "Retire an approved procedure (role ``supervisor``): ``assemble`` stops using it.")
