"""Turning a caller's (tenant, subject id) into the hashed ``Scope`` every store call takes."""

from __future__ import annotations

import re
from typing import Protocol

from carnet.domain.records import Scope
from carnet.errors import InvalidInput
from carnet.ports import SubjectHasher

SUBJECT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@\-]{0,127}$")


def valid_subject_id(subject_id: str) -> bool:
    return bool(SUBJECT_ID.fullmatch(subject_id))  # fullmatch: "$" alone lets a trailing newline in


class HasHasher(Protocol):
    @property
    def hasher(self) -> SubjectHasher: ...


def scope_for(deps: HasHasher, tenant: str, subject_id: str) -> Scope:
    """``deps`` is anything with a ``hasher`` (the full ``Deps`` in services)."""
    if not valid_subject_id(subject_id):
        raise InvalidInput("subject_id must be 1-128 characters of letters, digits and . _ : @ -")
    return Scope(tenant=tenant, subject=deps.hasher.subject_hash(tenant, subject_id))
