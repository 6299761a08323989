"""The control plane's catalog: API keys, record history and aliases, the subject registry, hash-key entries,
sealed pseudonym maps and people's corrections (``ports.corrections``). Each concern is a port of its own;
``Catalog`` is all of them, as the SQLite and PostgreSQL adapters implement it."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from carnet.domain.records import HistoryEntry, Scope
from carnet.domain.retention import SubjectRetention
from carnet.ports.corrections import CorrectionStore


@dataclass(frozen=True, slots=True)
class ApiKeyRecord:
    key_id: str
    tenant: str
    roles: tuple[str, ...]
    created_at: datetime
    revoked: bool = False
    rate_limit: str | None = None  # e.g. "50/second"; None: the deployment's default
    name: str | None = None  # a label for operators ("ivr-bot"), never personal data


@dataclass(frozen=True, slots=True)
class RegisteredSubject:
    """A subject as the registry keeps it: never its id in clear."""

    scope: Scope
    hash_key: str  # the key-store entry of the hash key that made ``scope.subject``
    sealed_id: bytes  # the subject id, sealed under the subject's data key


class ApiKeys(Protocol):
    """API keys by their peppered hash: what authentication and key administration use."""

    def add_api_key(self, *, key_id: str, key_hash: str, tenant: str, roles: Sequence[str],
                    rate_limit: str | None = None, name: str | None = None) -> ApiKeyRecord: ...

    def find_api_key(self, key_hash: str) -> ApiKeyRecord | None: ...

    def api_keys_version(self) -> Hashable | None:
        """A value that changes whenever a key may have been added, revoked or changed, by this process or
        another, read without waiting (no lock held by someone else, no round trip to a server); ``None``
        when it cannot be read so (then every request looks its key up). ``services.apikeys.KeyCache``
        keeps the keys it verified for as long as it stays the same."""
        ...

    def api_keys(self, tenant: str | None = None) -> list[ApiKeyRecord]:
        """Every key (of ``tenant`` when given), revoked ones included, oldest first."""
        ...

    def revoke_api_key(self, key_id: str, *, tenant: str | None = None) -> bool:
        """Revoke a key (only if it belongs to ``tenant`` when given); False if no such key."""
        ...


class RecordHistory(Protocol):
    """What happened to each record (metadata only), and the write ids merged into another record."""

    def append_history(self, scope: Scope, entries: Sequence[HistoryEntry]) -> None: ...

    def history(self, scope: Scope, memory_id: str) -> list[HistoryEntry]: ...

    def add_aliases(self, scope: Scope, aliases: dict[str, str]) -> None:
        """Remember that write id ``alias`` was merged into record ``target`` (so a replay is a no-op)."""
        ...

    def resolve_aliases(self, scope: Scope, ids: Sequence[str]) -> dict[str, str]:
        """``{alias: target}`` for those of ``ids`` that were merged into another record."""
        ...


class SubjectDirectory(Protocol):
    """The subjects of a tenant, by hash, with their retention state; erasing one drops its catalog rows."""

    def erase_subject(self, scope: Scope) -> int:
        """Delete the subject's history, aliases, registry row and corrections, at once; returns how many
        rows went."""
        ...

    def register_subject(self, scope: Scope, *, hash_key: str, sealed_id: bytes) -> bool:
        """Record the subject (its hash, the hash key's entry name, its id sealed); ``False`` if known."""
        ...

    def is_registered(self, scope: Scope) -> bool: ...

    def registered_subjects(self, tenant: str) -> list[RegisteredSubject]: ...

    def registered_tenants(self) -> list[str]:
        """Every tenant with at least one registered subject (maintenance walks them all)."""
        ...

    def subject_retention(self, scope: Scope) -> SubjectRetention:
        """The subject's legal hold and relationship end (defaults when nothing was recorded)."""
        ...

    def set_legal_hold(self, scope: Scope, *, held: bool, at: datetime, reference: str | None = None) -> None: ...

    def set_relationship_end(self, scope: Scope, ended_at: datetime | None) -> None:
        """``None`` reopens the relationship."""
        ...

    def move_subject(self, old: Scope, new: Scope, *, hash_key: str, sealed_id: bytes,
                     sealed_map: bytes | None = None) -> None:
        """A re-hashed subject: history, aliases, corrections, pseudonym map (resealed for ``new`` when
        given) and registry row move to ``new`` in one transaction."""
        ...


class HashKeyEntries(Protocol):
    """Which key-store entry holds each tenant's current subject-hashing key."""

    def hash_key_entry(self, tenant: str) -> str | None:
        """The key-store entry of the tenant's current hash key (``None``: the first one)."""
        ...

    def tenants(self) -> list[str]:
        """Every tenant with a registered subject or a hash-key row (what a backup names), sorted."""
        ...

    def set_hash_key_entry(self, tenant: str, entry: str) -> None: ...


class SealedMapStore(Protocol):
    """Each subject's pseudonym map, sealed, with a version for optimistic concurrency."""

    def pseudonym_map(self, scope: Scope) -> tuple[bytes, int] | None:
        """The subject's sealed pseudonym map and its version, if it has one."""
        ...

    def put_pseudonym_map(self, scope: Scope, sealed: bytes, *, version: int) -> bool:
        """Store the map as ``version`` + 1 if the stored version is still ``version`` (0: none yet)."""
        ...


class Catalog(ApiKeys, RecordHistory, SubjectDirectory, HashKeyEntries, SealedMapStore, CorrectionStore, Protocol):
    """The control plane as one store (SQLite embedded, PostgreSQL in production): every port above in
    one transactional place, so that a subject's rows move or go together."""

    def check(self) -> None: ...

    def close(self) -> None: ...
