"""The DPO's pages (role ``dpo``): a member's retention status and records, the export download,
rectification, restoring a superseded record, erasure and its receipt, legal hold and the end of the
relationship. Each is the facade's use case (the same door as ``/api/v1/subjects/...``); the member id
is always posted, and a form answers 303 to a GET page holding only a screen's token (screens.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, time

from fastapi import APIRouter, Request
from starlette.responses import Response

from carnet.entrypoints.http.console import views
from carnet.entrypoints.http.console.dates import parse_day
from carnet.entrypoints.http.console.screens import Screen
from carnet.entrypoints.http.console.security import harden
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
from carnet.entrypoints.http.routes_subjects import export_response
from carnet.errors import InvalidInput
from carnet.services.rights.rectify import Correction
from carnet.services.roles import DPO

router = APIRouter(prefix=f"{PREFIX}/dpo", route_class=ConsoleRoute, include_in_schema=False)

PAGE = 500


@router.get("")
def dpo_home(request: Request, v: Seen, view: str = "") -> Response:
    """The find form, or the member a form left on screen (``?view=``, a token of this session)."""
    facade_of(request).door.allow(v.who, "console.dpo", (DPO,))  # a refusal is audited, as every other
    screen = v.session.screens.show(view, page="dpo")
    if screen is None or screen.subject is None:
        return render(request, "dpo.html", v=v, subject=None, gone=bool(view))
    api = facade_of(request)
    status = api.retention(v.who, subject_id=screen.subject)
    page = api.list_memories(v.who, subject_id=screen.subject, status=None, limit=PAGE)
    return render(request, "dpo.html", v=v, subject=screen.subject, retention=status, done=screen.done,
                  timeline=views.timeline(page.items, more=page.next_cursor is not None),
                  unreadable=len(page.unreadable))


def _shown(v: Viewer, subject: str, done: str | None = None) -> Response:
    return after(v, Screen("dpo", subject=subject, done=done))


@router.post("")
def dpo_subject(v: Posted, subject_id: FormText = "") -> Response:
    return _shown(v, views.subject_id(subject_id))


@router.post("/export")
def export(request: Request, v: Posted, subject_id: FormText = "") -> Response:
    """A download (``Content-Disposition: attachment``): the browser stays on the page, nothing to redirect."""
    subject = views.subject_id(subject_id)
    return harden(export_response(subject, facade_of(request).export(v.who, subject_id=subject)))


@router.post("/erase")
def erase(request: Request, v: Posted, subject_id: FormText = "", confirm: FormText = "") -> Response:
    """The member id typed a second time confirms the erasure (it cannot be undone)."""
    subject = views.subject_id(subject_id)
    if confirm.strip() != subject:
        raise InvalidInput("the confirmation does not match the member id")
    return after(v, Screen("dpo/receipt", receipt=facade_of(request).erase(v.who, subject_id=subject)))


@router.get("/receipt")
def receipt(request: Request, v: Seen, view: str = "") -> Response:
    """The erasure's receipt (it names the member by keyed hash only), as long as the session holds it."""
    facade_of(request).door.allow(v.who, "console.dpo", (DPO,))
    screen = v.session.screens.show(view, page="dpo/receipt")
    if screen is None or screen.receipt is None:
        return render(request, "dpo.html", v=v, subject=None, gone=True)
    return render(request, "receipt.html", v=v, receipt=screen.receipt,
                  receipt_json=json.dumps(screen.receipt.as_dict(), indent=2, ensure_ascii=False))


@router.post("/hold")
def hold(request: Request, v: Posted, subject_id: FormText = "", reference: FormText = "") -> Response:
    subject = views.subject_id(subject_id)
    facade_of(request).legal_hold(v.who, subject_id=subject, hold=True, reference=reference.strip() or None)
    return _shown(v, subject, "hold")


@router.post("/release")
def release(request: Request, v: Posted, subject_id: FormText = "") -> Response:
    subject = views.subject_id(subject_id)
    facade_of(request).legal_hold(v.who, subject_id=subject, hold=False)
    return _shown(v, subject, "release")


@router.post("/relationship-end")
def relationship_end(request: Request, v: Posted, subject_id: FormText = "", ended_on: FormText = "") -> Response:
    """A day typed ``jj/mm/aaaa`` (or ``aaaa-mm-jj``), stored as midnight UTC; empty reopens the relationship."""
    subject = views.subject_id(subject_id)
    day = parse_day(ended_on)
    ended_at = datetime.combine(day, time(), tzinfo=UTC) if day else None
    facade_of(request).relationship_end(v.who, subject_id=subject, ended_at=ended_at)
    return _shown(v, subject, "relationship")


@router.post("/rectify")
def rectify(request: Request, v: Posted, subject_id: FormText = "", memory_id: FormText = "",
            text: FormText = "") -> Response:
    subject = views.subject_id(subject_id)
    if not text.strip():
        raise InvalidInput("the corrected text is empty")
    facade_of(request).rectify(v.who, subject_id=subject, memory_id=views.memory_id(memory_id),
                               correction=Correction(text=text))
    return _shown(v, subject, "rectified")


@router.post("/restore")
def restore(request: Request, v: Posted, subject_id: FormText = "", memory_id: FormText = "",
            reason: FormText = "") -> Response:
    """Undo a supersession (``memories.restore``); the reason is optional and never shown again."""
    subject = views.subject_id(subject_id)
    facade_of(request).restore(v.who, subject_id=subject, memory_id=views.memory_id(memory_id),
                               reason=reason.strip() or None)
    return _shown(v, subject, "restored")
