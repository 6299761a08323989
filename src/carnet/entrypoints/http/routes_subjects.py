"""The data subject's rights (role ``dpo``): export (GDPR art. 15/20), erasure (art. 17), and what
limits them: legal hold and the end of the relationship."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Annotated, Any

import structlog
from fastapi import APIRouter
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from carnet.domain.reconcile.values import Instant, Label
from carnet.entrypoints.http.auth import Api, Who
from carnet.entrypoints.http.routes_memories import SubjectId
from carnet.entrypoints.presenters.memories import history_entry_out, memory_out
from carnet.entrypoints.presenters.plain import as_json
from carnet.entrypoints.presenters.rights import ReceiptOut, RetentionOut, receipt_out, retention_out
from carnet.errors import CarnetError
from carnet.services.rights.export import Exported, NotExported, SubjectExport

log = structlog.get_logger(__name__)

router = APIRouter(prefix="/api/v1/subjects/{subject_id}", tags=["subjects"])

EXPORT_FORMAT = "carnet.export.v1"


@router.get("/export", response_class=StreamingResponse, responses={200: {
    "description": "Every record of the subject, decrypted, with history and provenance (streamed JSON).",
    "content": {"application/json": {"example": {
        "format": EXPORT_FORMAT, "subject_id": "member-4711", "exported_at": "2026-11-29T10:00:00+00:00",
        "count": 2, "records": [{"memory": {"id": "…", "kind": "fact", "text": "…"}, "history": [
            {"at": "2026-11-02T09:15:00+00:00", "action": "created", "actor": "3f9a…", "detail": {}}]},
            {"id": "…", "unreadable": "envelope_invalid", "history": []}],
        "unreadable": 1, "complete": True}}}}})
def export_subject(subject_id: SubjectId, who: Who, api: Api) -> StreamingResponse:
    """Everything Carnet holds on the subject, of every kind and status, decrypted, as one JSON
    document streamed record by record (a large subject never sits whole in memory)."""
    return export_response(subject_id, api.export(who, subject_id=subject_id))


def export_response(subject_id: str, found: SubjectExport) -> StreamingResponse:
    """The export as a download (the REST route's, and the console's)."""
    return StreamingResponse(
        _stream(subject_id, found), media_type="application/json",
        headers={"Content-Disposition": 'attachment; filename="carnet-export.json"', "Cache-Control": "no-store"})


def _stream(subject_id: str, found: SubjectExport) -> Iterator[bytes]:
    """Always one valid JSON document. A record that cannot be read is ``{"id", "unreadable": <reason
    code>, "history"}``; the tail says how many there were, and ``complete`` is false (with the error's
    code) if the stream had to stop early: the status line (200) was sent before the records were read."""
    head = {"format": EXPORT_FORMAT, "subject_id": subject_id, "exported_at": datetime.now(UTC).isoformat(),
            "count": found.count}
    yield json.dumps(head, ensure_ascii=False)[:-1].encode() + b', "records": ['
    tail: dict[str, Any] = {"unreadable": 0, "complete": True}
    try:
        for n, record in enumerate(found.records):
            yield (b"," if n else b"") + json.dumps(_record_json(record, tail), ensure_ascii=False).encode()
    except CarnetError as exc:
        tail.update(complete=False, error=exc.code)
        log.error("export_stopped", error=exc.code)
    except Exception as exc:  # the edge of a stream already started: close the document, say it is cut
        tail.update(complete=False, error="internal_error")
        log.error("export_stopped", error="internal_error", error_type=type(exc).__name__)
    yield b"], " + json.dumps(tail)[1:].encode()


def _record_json(record: Exported | NotExported, tail: dict[str, Any]) -> dict[str, Any]:
    history = [as_json(history_entry_out(e)) for e in record.history]
    if isinstance(record, NotExported):
        tail["unreadable"] += 1
        return {"id": record.id, "unreadable": record.reason, "history": history}
    return {"memory": as_json(memory_out(record.memory)), "history": history}


@router.delete("", response_model=ReceiptOut, responses={200: {
    "description": "The erasure receipt.", "content": {"application/json": {
    "example": {"tenant": "assur-nord", "subject_hash": "9c1e…", "at": "2026-11-29T10:00:00+00:00",
                "records_deleted": 42, "catalog_rows_deleted": 57, "data_key_destroyed": True,
                "verified": {"count_is_zero": True, "search_returns_nothing": True, "data_key_gone": True},
                "complete": True}}}}})
def erase_subject(subject_id: SubjectId, who: Who, api: Api) -> ReceiptOut:
    """Erasure (art. 17): records, history, pseudonym map, then the subject's data key; the receipt
    names the subject only by its keyed hash and says what was verified afterwards."""
    return receipt_out(api.erase(who, subject_id=subject_id))


class HoldBody(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"reference": "LIT-2026-0042"}]})

    reference: Annotated[Label, Field(max_length=64)] | None = Field(None,
                                  description="A case or matter reference (never personal data).")


class RelationshipBody(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"ended_at": "2026-06-30T00:00:00Z"}]})

    ended_at: Instant | None = Field(description="When the relationship ended; null reopens it.")


@router.get("/retention", response_model=RetentionOut)
def retention_status(subject_id: SubjectId, who: Who, api: Api) -> RetentionOut:
    """The subject's legal hold and end of relationship (role ``dpo``)."""
    return retention_out(api.retention(who, subject_id=subject_id))


@router.put("/legal-hold", response_model=RetentionOut)
def put_legal_hold(subject_id: SubjectId, body: HoldBody, who: Who, api: Api) -> RetentionOut:
    """Hold everything of the subject: retention, decay and erasure (409 ``legal_hold``) stop until lifted."""
    return retention_out(api.legal_hold(who, subject_id=subject_id, hold=True, reference=body.reference))


@router.delete("/legal-hold", response_model=RetentionOut)
def lift_legal_hold(subject_id: SubjectId, who: Who, api: Api) -> RetentionOut:
    return retention_out(api.legal_hold(who, subject_id=subject_id, hold=False))


@router.put("/relationship-end", response_model=RetentionOut)
def put_relationship_end(subject_id: SubjectId, body: RelationshipBody, who: Who, api: Api) -> RetentionOut:
    """Starts the clock of retention classes counted from the end of the relationship (AML records)."""
    return retention_out(api.relationship_end(who, subject_id=subject_id, ended_at=body.ended_at))
