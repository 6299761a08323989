"""The caller's tenant audit trail (roles ``dpo`` or ``admin``): read it as JSON lines, verify its chain."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse

from carnet.api.auth import Ctr, Who
from carnet.api.responses import VerdictOut
from carnet.domain.audit import AuditEntry
from carnet.domain.values import MAX_SAFE_INT

router = APIRouter(prefix="/api/v1/audit", tags=["audit"])


@router.get("", response_class=StreamingResponse, responses={200: {
    "description": "One JSON object per line, in chain order.",
    "content": {"application/x-ndjson": {"example": (
        '{"tenant": "assur-nord", "seq": 1, "at": "2026-11-29T10:00:00+00:00", "actor": "3f9a0c1d2e4b", '
        '"action": "memory.write", "subject": "9c1e…", "targets": [], "outcome": "ok", "detail": {"count": 1}, '
        '"prev_hash": "000…", "hash": "5d2…"}\n')}}}})
def audit_entries(who: Who, c: Ctr, after_seq: Annotated[int, Query(ge=0, le=MAX_SAFE_INT)] = 0,
                  limit: Annotated[int, Query(ge=1, le=100_000)] = 10_000) -> StreamingResponse:
    """Entries after ``after_seq`` (for a SIEM that pulls incrementally)."""
    who.require("dpo", "admin")
    c.audit.flush()
    entries = c.audit.log.entries(who.tenant, after_seq=after_seq)
    c.audit.record(c.audit.event(tenant=who.tenant, actor=who.key_id, action="audit.read",
                                 detail={"after_seq": after_seq}))
    return StreamingResponse(_lines(entries, limit), media_type="application/x-ndjson")


def _lines(entries: Iterator[AuditEntry], limit: int) -> Iterator[bytes]:
    for n, entry in enumerate(entries):
        if n >= limit:
            return
        yield json.dumps(entry.as_dict(), ensure_ascii=False).encode() + b"\n"


@router.get("/verify", response_model=VerdictOut)
def verify(who: Who, c: Ctr) -> dict[str, Any]:
    """Walks the tenant's chain; ``problems`` names every altered, missing or reordered entry."""
    who.require("dpo", "admin")
    return c.audit.verify(who.tenant).as_dict()
