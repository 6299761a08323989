"""Corrections by people, kept sealed in the control plane (one row per restore, per subject)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from carnet.domain.records import Scope


@dataclass(frozen=True, slots=True)
class SealedCorrection:
    """A stored correction: who it belongs to (keyed hash), when, and the pair sealed."""

    scope: Scope
    id: str
    at: datetime
    sealed: bytes


class CorrectionStore(Protocol):
    """Rows of ``corrections``; ``SubjectDirectory.erase_subject`` deletes a subject's with its other
    rows, and ``move_subject`` moves them."""

    def add_correction(self, scope: Scope, *, correction_id: str, at: datetime, sealed: bytes) -> None:
        """Insert, or replace the row of the same id (a restore retried)."""
        ...

    def corrections(self, tenant: str) -> list[SealedCorrection]:
        """Every correction of the tenant, oldest first (then by id)."""
        ...

    def subject_corrections(self, scope: Scope) -> int:
        """How many corrections the subject has (erasure checks there are none left)."""
        ...
