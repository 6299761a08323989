"""The member view (role ``agent``; the timeline also ``dpo``): find a member by id, the timeline of
their facts, episodes and procedures with what superseded what (a ``supervisor`` or ``dpo`` may restore
a superseded one), and a search and an ``assemble`` preview with each memory's score signals.

The member id is always posted (a form field), never put in a path or a query string: URLs end up in
proxies' and browsers' logs and history. Each page is the facade's use case, as over REST: the role,
the special-category policy of the key and the audit entry are the facade's."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from starlette.responses import Response

from carnet.entrypoints.http.console import views
from carnet.entrypoints.http.console.web import PREFIX, ConsoleRoute, FormText, Posted, Seen, facade_of, render
from carnet.errors import InvalidInput
from carnet.services.memories import recall

router = APIRouter(prefix=f"{PREFIX}/member", route_class=ConsoleRoute, include_in_schema=False)

PAGE = 500  # records shown on one timeline (the REST list's largest page)


@router.get("")
def find_form(request: Request, v: Seen) -> Response:
    return render(request, "member.html", v=v, subject=None)


@router.post("")
def member(request: Request, v: Posted, subject_id: FormText = "") -> Response:
    subject = views.subject_id(subject_id)
    page = facade_of(request).list_memories(v.who, subject_id=subject, status=None, limit=PAGE)
    return render(request, "member.html", v=v, subject=subject,
                  timeline=views.timeline(page.items, more=page.next_cursor is not None),
                  unreadable=len(page.unreadable))


@router.post("/restore")
def restore(request: Request, v: Posted, subject_id: FormText = "", memory_id: FormText = "",
            reason: FormText = "") -> Response:
    """A supervisor (or DPO) restores a superseded record from the timeline (``memories.restore``);
    the timeline is shown again, as after the member's form (the member id stays out of any URL)."""
    subject = views.subject_id(subject_id)
    api = facade_of(request)
    api.restore(v.who, subject_id=subject, memory_id=views.memory_id(memory_id), reason=reason.strip() or None)
    page = api.list_memories(v.who, subject_id=subject, status=None, limit=PAGE)
    return render(request, "member.html", v=v, subject=subject, done="restored",
                  timeline=views.timeline(page.items, more=page.next_cursor is not None),
                  unreadable=len(page.unreadable))


@router.post("/search")
def search(request: Request, v: Posted, subject_id: FormText = "", query: FormText = "",
           include_superseded: Annotated[bool, Form()] = False) -> Response:
    subject = views.subject_id(subject_id)
    if not query.strip():
        raise InvalidInput("query is empty")
    api = facade_of(request)
    found = api.search(v.who, subject_id=subject, query=recall.Query(query, k=10,
                                                                        include_superseded=include_superseded))
    return render(request, "member.html", v=v, subject=subject, query=query, include_superseded=include_superseded,
                  results=views.whys(found, api.weights), unreadable=len(found.unreadable))


@router.post("/assemble")
def assemble(request: Request, v: Posted, subject_id: FormText = "", query: FormText = "") -> Response:
    subject = views.subject_id(subject_id)
    api = facade_of(request)
    ctx = api.assemble(v.who, subject_id=subject, query=query, budget=api.budgets({}))
    w = api.weights
    tiers = {"memories": views.whys(ctx.memories, w), "episodes": views.whys(ctx.episodes, w),
             "procedures": views.whys(ctx.procedures, w)}
    return render(request, "member.html", v=v, subject=subject, query=query, context=ctx, tiers=tiers,
                  unreadable=len(ctx.unreadable))
