"""``POST /api/v1/context/assemble``: what the assistant puts in its prompt before each LLM call."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from carnet.entrypoints.http.auth import Api, Who
from carnet.entrypoints.http.presented import presented
from carnet.entrypoints.http.schemas import AssembleBody
from carnet.entrypoints.presenters.context import ContextOut, context_out

router = APIRouter(prefix="/api/v1/context", tags=["context"])


@router.post("/assemble", response_model=ContextOut)
def assemble_context(body: AssembleBody, who: Who, api: Api) -> Response:
    b = api.budgets(body.budgets.model_dump() if body.budgets else {})
    ctx = api.assemble(who, subject_id=body.subject_id, query=body.query, budget=b, agent_id=body.agent_id,
                       queue=body.queue)
    return presented(context_out(ctx))  # the hot path: serialised once, natively
