"""The member view (role ``agent``; the timeline also ``dpo``): find a member by id, the timeline of
their facts, episodes and procedures with what superseded what (a ``supervisor`` or ``dpo`` may restore
a superseded one), and a search and an ``assemble`` preview with each memory's score signals.

The member id is always posted (a form field), never put in a path or a query string: URLs end up in
proxies' and browsers' logs and history. A form answers 303 to ``GET /console/member?view=<token>``, the
token naming a screen held in the session (screens.py), so Back and Reload work. Each page is the
facade's use case, as over REST: the role, the special-category policy of the key and the audit entry
are the facade's."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from starlette.responses import Response

from carnet.entrypoints.http.console import views
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
from carnet.errors import InvalidInput
from carnet.services.memories import recall

router = APIRouter(prefix=f"{PREFIX}/member", route_class=ConsoleRoute, include_in_schema=False)

PAGE = 500  # records shown on one timeline (the REST list's largest page)


@router.get("")
def member_page(request: Request, v: Seen, view: str = "") -> Response:
    """The find form, or the screen a form left (``?view=``, a token of this session: screens.py)."""
    screen = v.session.screens.show(view, page="member")
    if screen is None or screen.subject is None:
        return render(request, "member.html", v=v, subject=None, gone=bool(view))
    if screen.mode == "search":
        return _search(request, v, screen)
    if screen.mode == "assemble":
        return _assemble(request, v, screen)
    page = facade_of(request).list_memories(v.who, subject_id=screen.subject, status=None, limit=PAGE)
    return render(request, "member.html", v=v, subject=screen.subject, done=screen.done,
                  timeline=views.timeline(page.items, more=page.next_cursor is not None),
                  unreadable=len(page.unreadable))


@router.post("")
def member(v: Posted, subject_id: FormText = "") -> Response:
    return after(v, Screen("member", subject=views.subject_id(subject_id)))


@router.post("/restore")
def restore(request: Request, v: Posted, subject_id: FormText = "", memory_id: FormText = "",
            reason: FormText = "") -> Response:
    """A supervisor (or DPO) restores a superseded record from the timeline (``memories.restore``);
    the timeline is shown again, as after the member's form (the member id stays out of any URL)."""
    subject = views.subject_id(subject_id)
    facade_of(request).restore(v.who, subject_id=subject, memory_id=views.memory_id(memory_id),
                               reason=reason.strip() or None)
    return after(v, Screen("member", subject=subject, done="restored"))


@router.post("/search")
def search(v: Posted, subject_id: FormText = "", query: FormText = "",
           include_superseded: Annotated[bool, Form()] = False) -> Response:
    subject = views.subject_id(subject_id)
    if not query.strip():
        raise InvalidInput("query is empty")
    return after(v, Screen("member", subject=subject, mode="search", query=query,
                           include_superseded=include_superseded))


def _search(request: Request, v: Viewer, screen: Screen) -> Response:
    api = facade_of(request)
    found = api.search(v.who, subject_id=str(screen.subject), query=recall.Query(
        screen.query, k=10, include_superseded=screen.include_superseded))
    return render(request, "member.html", v=v, subject=screen.subject, query=screen.query,
                  include_superseded=screen.include_superseded, results=views.whys(found, api.weights),
                  unreadable=len(found.unreadable))


@router.post("/assemble")
def assemble(v: Posted, subject_id: FormText = "", query: FormText = "") -> Response:
    return after(v, Screen("member", subject=views.subject_id(subject_id), mode="assemble", query=query))


def _assemble(request: Request, v: Viewer, screen: Screen) -> Response:
    api = facade_of(request)
    ctx = api.assemble(v.who, subject_id=str(screen.subject), query=screen.query, budget=api.budgets({}))
    w = api.weights
    tiers = {"memories": views.whys(ctx.memories, w), "episodes": views.whys(ctx.episodes, w),
             "procedures": views.whys(ctx.procedures, w)}
    return render(request, "member.html", v=v, subject=screen.subject, query=screen.query, context=ctx, tiers=tiers,
                  unreadable=len(ctx.unreadable))
