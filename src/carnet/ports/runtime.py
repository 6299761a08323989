"""The clock and the per-subject lock."""

from __future__ import annotations

from contextlib import AbstractContextManager
from datetime import datetime
from typing import Protocol

from carnet.domain.records import Scope


class Clock(Protocol):
    def now(self) -> datetime: ...


class SubjectLock(Protocol):
    """Serialises everything that writes one subject (remember, intake application, rectify, forget,
    retention, erasure) across every thread and process that shares the subject's stores: the
    in-process table of locks on the embedded store (``carnet.services.locks``), PostgreSQL advisory
    locks when the control plane is PostgreSQL (``carnet.adapters.postgres.locks``).

    Re-entrant within a thread: an intake worker holds its subject's lock around ``remember``, which
    takes it again. An adapter that can wait on another process raises ``SubjectBusy`` (503, retried)
    rather than waiting for ever."""

    def for_scope(self, scope: Scope) -> AbstractContextManager[object]: ...

    def check_held(self, scope: Scope) -> None:
        """Raise unless this thread holds the subject's lock now: ``UnlockedWrite`` (a defect) when it
        does not, ``SubjectLockLost`` (503, retried) when the adapter finds it was lost under the
        write. The key ring asks before it creates a data key."""
        ...

    def close(self) -> None: ...
