"""Messages queued for extraction: leased by workers, completed, failed, retried."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from carnet.domain.intake import Intake, QueueStats


class IntakeStore(Protocol):
    """Durable queue of intakes (SQLite embedded, PostgreSQL for several workers)."""

    def add(self, intake: Intake) -> Intake:
        """Store a new pending intake; with an idempotency key already used by the same tenant and
        subject, return the stored one instead (nothing added)."""
        ...

    def get(self, tenant: str, intake_id: str) -> Intake | None:
        """The tenant's intake (another tenant's is None, as an unknown one)."""
        ...

    def lease(self, *, owner: str, now: datetime, seconds: float, limit: int = 1) -> list[Intake]:
        """Take up to ``limit`` due intakes, at most one per subject and only each subject's oldest
        unfinished one (in order, one at a time), skipping subjects whose intake another live lease
        holds; an expired lease is taken over."""
        ...

    def renew(self, intake_id: str, *, owner: str, until: datetime) -> bool: ...

    def stage(self, intake_id: str, *, owner: str, sealed: bytes) -> bool:
        """Replace the sealed payload (the messages, then the messages with their extraction), if
        ``owner`` holds the lease: a retry after a crash applies the staged extraction again instead
        of asking the extractor anew, so the same intake never yields two different sets of memories."""
        ...

    def complete(self, intake_id: str, *, owner: str, memory_ids: Sequence[str], now: datetime,
                 keep_until: datetime | None = None) -> bool:
        """Done, if ``owner`` still holds the lease (False: it was lost, nothing changed); its sealed
        payload dropped, or with ``keep_until`` kept until then as its session's context."""
        ...

    def session_context(self, tenant: str, subject: str, session_key: str, *, now: datetime) -> list[Intake]:
        """The subject's done intakes of the session (``session_key``) whose payload is still kept
        (``context_until`` after ``now``), oldest first."""
        ...

    def expire_context(self, now: datetime) -> int:
        """Drops the kept payloads whose ``context_until`` has passed; how many."""
        ...

    def fail(self, intake_id: str, *, owner: str, reason: str, now: datetime, retry_at: datetime | None,
             counted: bool = True) -> bool:
        """Back to pending at ``retry_at``, or dead when None; False if the lease was lost. ``counted``
        False (a dependency was down, not the intake's fault): the lease's attempt is taken back, so the
        attempt count says how many times the intake itself failed."""
        ...

    def retry_dead(self, *, tenant: str | None = None, intake_id: str | None = None, now: datetime) -> int:
        """Dead intakes back to pending with a fresh attempt count; how many."""
        ...

    def stats(self, tenant: str | None = None) -> QueueStats:
        """Unfinished and dead intakes, of every tenant or of ``tenant`` only."""
        ...

    def dead(self, tenant: str, *, limit: int = 100) -> list[Intake]:
        """The tenant's dead intakes, most recently failed first (their payloads left out: ``sealed`` empty)."""
        ...

    def forget_subject(self, tenant: str, subject: str) -> int:
        """Erasure: every intake of the subject, whatever its state."""
        ...

    def close(self) -> None: ...
