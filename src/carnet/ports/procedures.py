"""Team procedures: proposed, approved, rejected or retired by a person."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from carnet.domain.procedures import ProcedureStatus, TeamProcedure


class TeamProcedures(Protocol):
    """The tenants' team procedures (control plane: SQLite embedded, PostgreSQL ``carnet.team_procedures``).
    Every method is confined to one tenant: another tenant's procedure is None, as an unknown one."""

    def add(self, procedure: TeamProcedure) -> TeamProcedure:
        """Store a new one; a procedure of the same tenant with the same folded text (``key``) still
        proposed or approved is returned instead (nothing added): a proposal is made once. A person's
        proposal (``origin`` None) of the text of a live derived one adopts it: its origin is cleared,
        and it no longer goes with the member it was read from."""
        ...

    def forget_origin(self, tenant: str, origin: str) -> list[str]:
        """Delete every procedure derived from the member ``origin`` (its keyed hash), whatever its
        status, physically; the ids deleted. Part of that member's erasure."""
        ...

    def get(self, tenant: str, procedure_id: str) -> TeamProcedure | None: ...

    def list(self, tenant: str, *, status: ProcedureStatus | None = None, limit: int = 200) -> list[TeamProcedure]:
        """The tenant's procedures (of one status), oldest first."""
        ...

    def decide(self, tenant: str, procedure_id: str, *, expected: ProcedureStatus, status: ProcedureStatus,
               decided_by: str, at: datetime) -> TeamProcedure | None:
        """Move it from ``expected`` to ``status`` in one statement; None when it is not (or no longer)
        in ``expected`` (two supervisors deciding at once: one wins, the other is told)."""
        ...

    def move_origin(self, tenant: str, old: str, new: str) -> int:
        """The procedures derived from the member ``old`` now name it ``new`` (its hash under a new hash
        key, ``carnet keys rehash``); how many."""
        ...

    def close(self) -> None: ...
