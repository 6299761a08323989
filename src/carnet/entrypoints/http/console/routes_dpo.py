"""The DPO's pages (role ``dpo``): a member's retention status and records, the export download,
rectification, restoring a superseded record, erasure and its receipt, legal hold and the end of the
relationship. Each is the facade's use case (the same door as ``/api/v1/subjects/...``); the member id
is always posted."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, time

from fastapi import APIRouter, Request
from starlette.responses import Response

from carnet.entrypoints.http.console import views
from carnet.entrypoints.http.console.security import harden
from carnet.entrypoints.http.console.web import PREFIX, ConsoleRoute, FormText, Posted, Seen, Viewer, facade_of, render
from carnet.entrypoints.http.routes_subjects import export_response
from carnet.errors import InvalidInput
from carnet.services.rights.rectify import Correction
from carnet.services.roles import DPO

router = APIRouter(prefix=f"{PREFIX}/dpo", route_class=ConsoleRoute, include_in_schema=False)

PAGE = 500


@router.get("")
def dpo_home(request: Request, v: Seen) -> Response:
    facade_of(request).door.allow(v.who, "console.dpo", (DPO,))  # a refusal is audited, as every other
    return render(request, "dpo.html", v=v, subject=None)


def _subject_page(request: Request, v: Viewer, subject: str, *, done: str | None = None) -> Response:
    api = facade_of(request)
    status = api.retention(v.who, subject_id=subject)
    page = api.list_memories(v.who, subject_id=subject, status=None, limit=PAGE)
    return render(request, "dpo.html", v=v, subject=subject, retention=status, done=done,
                  timeline=views.timeline(page.items, more=page.next_cursor is not None),
                  unreadable=len(page.unreadable))


@router.post("")
def dpo_subject(request: Request, v: Posted, subject_id: FormText = "") -> Response:
    return _subject_page(request, v, views.subject_id(subject_id))


@router.post("/export")
def export(request: Request, v: Posted, subject_id: FormText = "") -> Response:
    subject = views.subject_id(subject_id)
    return harden(export_response(subject, facade_of(request).export(v.who, subject_id=subject)))


@router.post("/erase")
def erase(request: Request, v: Posted, subject_id: FormText = "", confirm: FormText = "") -> Response:
    """The member id typed a second time confirms the erasure (it cannot be undone)."""
    subject = views.subject_id(subject_id)
    if confirm.strip() != subject:
        raise InvalidInput("the confirmation does not match the member id")
    receipt = facade_of(request).erase(v.who, subject_id=subject)
    return render(request, "receipt.html", v=v, receipt=receipt,
                  receipt_json=json.dumps(receipt.as_dict(), indent=2, ensure_ascii=False))


@router.post("/hold")
def hold(request: Request, v: Posted, subject_id: FormText = "", reference: FormText = "") -> Response:
    subject = views.subject_id(subject_id)
    facade_of(request).legal_hold(v.who, subject_id=subject, hold=True, reference=reference.strip() or None)
    return _subject_page(request, v, subject, done="hold")


@router.post("/release")
def release(request: Request, v: Posted, subject_id: FormText = "") -> Response:
    subject = views.subject_id(subject_id)
    facade_of(request).legal_hold(v.who, subject_id=subject, hold=False)
    return _subject_page(request, v, subject, done="release")


@router.post("/relationship-end")
def relationship_end(request: Request, v: Posted, subject_id: FormText = "", ended_on: FormText = "") -> Response:
    """A date (``YYYY-MM-DD``, midnight UTC); empty reopens the relationship."""
    subject = views.subject_id(subject_id)
    facade_of(request).relationship_end(v.who, subject_id=subject, ended_at=_day(ended_on))
    return _subject_page(request, v, subject, done="relationship")


@router.post("/rectify")
def rectify(request: Request, v: Posted, subject_id: FormText = "", memory_id: FormText = "",
            text: FormText = "") -> Response:
    subject = views.subject_id(subject_id)
    if not text.strip():
        raise InvalidInput("the corrected text is empty")
    facade_of(request).rectify(v.who, subject_id=subject, memory_id=views.memory_id(memory_id),
                               correction=Correction(text=text))
    return _subject_page(request, v, subject, done="rectified")


@router.post("/restore")
def restore(request: Request, v: Posted, subject_id: FormText = "", memory_id: FormText = "",
            reason: FormText = "") -> Response:
    """Undo a supersession (``memories.restore``); the reason is optional and never shown again."""
    subject = views.subject_id(subject_id)
    facade_of(request).restore(v.who, subject_id=subject, memory_id=views.memory_id(memory_id),
                               reason=reason.strip() or None)
    return _subject_page(request, v, subject, done="restored")


def _day(raw: str) -> datetime | None:
    if not raw.strip():
        return None
    try:
        return datetime.combine(date.fromisoformat(raw.strip()), time(), tzinfo=UTC)
    except ValueError:
        raise InvalidInput("a date is YYYY-MM-DD") from None
