"""The audit chain and the erasure ledger, both kept outside the data they speak of."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from carnet.domain.audit import AuditEntry, AuditEvent


class AuditLog(Protocol):
    """Append-only, hash-chained per tenant (``carnet.domain.audit``)."""

    def append(self, events: Sequence[AuditEvent]) -> list[AuditEntry]:
        """Link and store in order, all or nothing. Raises ``AuditUnavailable``."""
        ...

    def head(self, tenant: str) -> tuple[int, str] | None: ...

    def entries(self, tenant: str, *, after_seq: int = 0, page: int = 1000) -> Iterator[AuditEntry]: ...

    def tenants(self) -> list[str]: ...

    def check(self) -> None: ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class ErasureEntry:
    """One erasure, as the ledger keeps it: keyed hashes only, never a subject id.

    ``subject`` is ``None`` for a whole tenant (a panic purge). ``hash_key`` names the hash-key
    generation that made ``subject`` (``~tenant-hash-key``, ``~tenant-hash-key.2``…): a hash only
    matches data written under the same generation."""

    tenant: str
    subject: str | None
    hash_key: str | None
    at: datetime


class ErasureLedger(Protocol):
    """Every erasure ever made, kept outside the data and its backups, so a restore can apply again
    the erasures made after its backup was taken."""

    def append(self, entry: ErasureEntry) -> None:
        """Durably record ``entry`` before anything is deleted; raises ``DependencyUnavailable``."""
        ...

    def entries(self) -> list[ErasureEntry]:
        """Every entry, oldest first; raises ``LedgerCorrupt`` rather than skip an unreadable line."""
        ...

    def close(self) -> None: ...
