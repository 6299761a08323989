"""The caller's tenant audit trail (roles ``dpo`` or ``admin``): read it as JSON lines, verify its chain.
Roles and the ``audit.read`` entry are the facade's (``Facade.admin``), as for every other route."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse

from carnet.domain.audit import AuditEntry
from carnet.domain.reconcile.values import MAX_SAFE_INT
from carnet.entrypoints.http.auth import Api, Who
from carnet.entrypoints.presenters.audit import VerdictOut, verdict_out

router = APIRouter(prefix="/api/v1/audit", tags=["audit"])


@router.get("", response_class=StreamingResponse, responses={200: {
    "description": "One JSON object per line, in chain order.",
    "content": {"application/x-ndjson": {"example": (
        '{"tenant": "assur-nord", "seq": 1, "at": "2026-11-29T10:00:00+00:00", "actor": "3f9a0c1d2e4b", '
        '"action": "memory.write", "subject": "9c1e…", "targets": [], "outcome": "ok", "detail": {"count": 1}, '
        '"prev_hash": "000…", "hash": "5d2…"}\n')}}}})
def audit_entries(who: Who, api: Api, after_seq: Annotated[int, Query(ge=0, le=MAX_SAFE_INT)] = 0,
                  limit: Annotated[int, Query(ge=1, le=100_000)] = 10_000) -> StreamingResponse:
    """Entries after ``after_seq`` (for a SIEM that pulls incrementally)."""
    entries = api.admin.audit_entries(who, after_seq=after_seq)
    return StreamingResponse(_lines(entries, limit), media_type="application/x-ndjson")


def _lines(entries: Iterator[AuditEntry], limit: int) -> Iterator[bytes]:
    for n, entry in enumerate(entries):
        if n >= limit:
            return
        yield json.dumps(entry.as_dict(), ensure_ascii=False).encode() + b"\n"


@router.get("/verify", response_model=VerdictOut)
def verify(who: Who, api: Api) -> VerdictOut:
    """Walks the tenant's chain; ``problems`` names every altered, missing or reordered entry."""
    return verdict_out(api.admin.audit_verify(who))
