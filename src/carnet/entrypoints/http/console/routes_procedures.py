"""The team procedures page (roles ``agent`` and ``supervisor``): an agent reads the approved
procedures and may propose one; a supervisor also sees the proposed ones and approves, rejects or
retires them. Every form carries the session's CSRF token; every action is the facade's use case
(the same door, roles and audit entries as ``/api/v1/procedures``). A procedure id in a path is no
personal data (it names the team's text, not a member)."""

from __future__ import annotations

from uuid import UUID

from fastapi import APIRouter, Request
from starlette.responses import Response

from carnet.domain.procedures import Decision, ProcedureStatus
from carnet.entrypoints.http.console.screens import Screen
from carnet.entrypoints.http.console.web import (
    PREFIX,
    ConsoleRoute,
    FormText,
    Posted,
    Seen,
    Viewer,
    after,
    facade_of,
    render,
)
from carnet.services.procedures import Proposal
from carnet.services.roles import SUPERVISOR

router = APIRouter(prefix=f"{PREFIX}/procedures", route_class=ConsoleRoute, include_in_schema=False)


def _page(request: Request, v: Viewer, *, done: str | None) -> Response:
    found = facade_of(request).list_procedures(v.who)
    by_status = {s.value: [p for p in found if p.status is s] for s in ProcedureStatus}
    return render(request, "procedures.html", v=v, groups=by_status, supervisor=SUPERVISOR in v.who.roles,
                  done=done)


@router.get("")
def procedures(request: Request, v: Seen, view: str = "") -> Response:
    """The page, with the notice of the decision a form left (``?view=``, a token of this session)."""
    screen = v.session.screens.show(view, page="procedures")
    return _page(request, v, done=screen.done if screen else None)


@router.post("")
def propose(request: Request, v: Posted, text: FormText = "", queue: FormText = "",
            applies_when: FormText = "") -> Response:
    """``applies_when``: keywords separated by commas."""
    keywords = tuple(k.strip() for k in applies_when.split(",") if k.strip())
    facade_of(request).propose_procedure(v.who, proposal=Proposal(text.strip(), queue=queue.strip() or None,
                                                                  applies_when=keywords))
    return after(v, Screen("procedures", done="proposed"))


def _decide(request: Request, v: Viewer, procedure_id: UUID, decision: Decision) -> Response:
    facade_of(request).decide_procedure(v.who, procedure_id=str(procedure_id), decision=decision)
    return after(v, Screen("procedures", done=decision.value))


@router.post("/{procedure_id}/approve")
def approve(request: Request, v: Posted, procedure_id: UUID) -> Response:
    return _decide(request, v, procedure_id, Decision.APPROVE)


@router.post("/{procedure_id}/reject")
def reject(request: Request, v: Posted, procedure_id: UUID) -> Response:
    return _decide(request, v, procedure_id, Decision.REJECT)


@router.post("/{procedure_id}/retire")
def retire(request: Request, v: Posted, procedure_id: UUID) -> Response:
    return _decide(request, v, procedure_id, Decision.RETIRE)
