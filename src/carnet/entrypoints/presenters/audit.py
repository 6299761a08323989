"""The verdict on a tenant's audit chain."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from carnet.domain.audit import Verdict


class ProblemOut(BaseModel):
    seq: int
    reason: Literal["altered", "missing", "broken_link", "not_in_head", "wrong_tenant"]


class VerdictOut(BaseModel):
    tenant: str
    entries: int
    ok: bool
    problems: list[ProblemOut]


def verdict_out(verdict: Verdict) -> VerdictOut:
    """The verdict's own fields (``Verdict.as_dict``, which ``carnet audit verify`` prints too)."""
    return VerdictOut.model_validate(verdict.as_dict())
