"""``POST /api/v1/context/assemble``: what the assistant puts in its prompt before each LLM call.

A valid request is answered by ``carnet.entrypoints.http.assemble_path`` before FastAPI's router sees
it (the same ``answer`` below, in one thread hop); this route answers the rest (a body FastAPI must
refuse, a missing principal) and publishes the operation in the OpenAPI document."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from carnet.entrypoints.http.auth import Api, Who
from carnet.entrypoints.http.presented import presented
from carnet.entrypoints.http.schemas import AssembleBody
from carnet.entrypoints.presenters.context import ContextOut, context_out
from carnet.services.apikeys import Principal
from carnet.services.facade import Facade

PATH = "/api/v1/context/assemble"
router = APIRouter(prefix="/api/v1/context", tags=["context"])


@router.post("/assemble", response_model=ContextOut)
def assemble_context(body: AssembleBody, who: Who, api: Api) -> Response:
    return answer(api, who, body)


def answer(api: Facade, who: Principal, body: AssembleBody) -> Response:
    """The context assembled for ``body``, serialised once, natively (the hot path)."""
    b = api.budgets(body.budgets.model_dump() if body.budgets else {})
    ctx = api.assemble(who, subject_id=body.subject_id, query=body.query, budget=b, agent_id=body.agent_id,
                       queue=body.queue)
    return presented(context_out(ctx))
