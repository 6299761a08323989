"""Keys: the KMS that wraps data keys, the store of wrapped keys, subject keys, hashing keys, and telling other
processes that a key was destroyed."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol


class SubjectHasher(Protocol):
    """Turns a caller's subject id (personal data) into the keyed hash stored everywhere."""

    def subject_hash(self, tenant: str, subject_id: str) -> str: ...

    def hash_key(self, tenant: str) -> str:
        """Name of the key the tenant's hashes are made with now (recorded with each subject)."""
        ...

    def token_key(self, tenant: str) -> bytes:
        """Per-tenant key for hashing sparse tokens."""
        ...

    def blind_tokens(self, tenant: str, identifiers: Iterable[str]) -> tuple[str, ...]:
        """Blind-index tokens of ``identifiers`` (keyed, normalised, truncated), sorted, no repeats."""
        ...

    def request_token(self, tenant: str, value: str) -> str:
        """Keyed hash of a request's identity or body (idempotency keys, record ids, fingerprints)."""
        ...


@dataclass(frozen=True, slots=True)
class WrappedKey:
    """A data key as the KMS wrapped it: safe to store (in the key store, never in data backups)."""

    tenant: str
    ciphertext: str  # the KMS's own format, e.g. Transit's "vault:v3:…"
    kek_version: int


class Kms(Protocol):
    """Key-encryption keys per tenant, which never leave the KMS (Vault/OpenBao Transit, a PKCS#11
    HSM, or the dev key file). Data keys are generated under them and stored wrapped."""

    def ensure_tenant_key(self, tenant: str) -> None: ...

    def generate_data_key(self, tenant: str) -> tuple[bytes, WrappedKey]:
        """A fresh 256-bit data key: its plaintext (kept in memory only) and its wrapped form."""
        ...

    def unwrap(self, wrapped: WrappedKey) -> bytes: ...

    def rotate(self, tenant: str) -> int:
        """A new version of the tenant's key; returns it. Existing wrapped keys still unwrap."""
        ...

    def rewrap(self, wrapped: Sequence[WrappedKey]) -> list[WrappedKey]:
        """The same data keys wrapped under the newest version, in the same order, same tenant."""
        ...

    def latest_version(self, tenant: str) -> int: ...

    def set_min_decryption_version(self, tenant: str, version: int) -> None:
        """Retire older versions: keys still wrapped under them stop unwrapping."""
        ...

    def destroy_tenant_key(self, tenant: str) -> bool:
        """Panic purge: destroy every version of the tenant's key; False when there was none."""
        ...

    def check(self) -> None: ...


class SubjectKeys(Protocol):
    """The subject's data key, as erasure sees it: destroying it makes every copy of the subject's
    sealed records (snapshots, backups) unreadable."""

    def shred(self, tenant: str, subject: str) -> bool:
        """Destroy the stored wrapped key and evict it from memory; False when there was none."""
        ...

    def exists(self, tenant: str, subject: str) -> bool: ...


@dataclass(frozen=True, slots=True)
class StoredKey:
    """A subject's data key as stored: its id (written in every blob header) and its wrapped form."""

    subject: str
    key_id: str
    wrapped: WrappedKey

    @property
    def tenant(self) -> str:
        return self.wrapped.tenant


class KeyStore(Protocol):
    """Where wrapped data keys live: one entry per (tenant, subject), never inside a data backup.

    Deleting an entry is the crypto-shred: once the wrapped key is gone, every copy of the subject's
    ciphertext (snapshots, backups of the data dir) is unreadable even with the live KMS. Hence two
    rules instead of a blind ``put``:

    - ``put_if_absent``: two writers creating the first key of a subject at once must agree on one
      key, or records sealed under the loser's key would be lost;
    - ``replace`` is a compare-and-swap: a rewrap that read an entry before an erasure must not write
      it back afterwards (that would resurrect a shredded key).
    """

    def get(self, tenant: str, subject: str) -> StoredKey | None: ...

    def put_if_absent(self, key: StoredKey) -> StoredKey:
        """Store ``key`` unless the subject already has one; return the entry that is stored."""
        ...

    def replace(self, old: StoredKey, new: StoredKey) -> bool:
        """Swap ``old`` for ``new`` (same subject and key id) only if ``old`` is still stored."""
        ...

    def delete(self, tenant: str, subject: str) -> bool:
        """Destroy the subject's entry; ``True`` if there was one."""
        ...

    def scan(self, tenant: str) -> Iterator[StoredKey]:
        """Every entry of the tenant (for rewrap), read lazily."""
        ...


class CacheEvictions(Protocol):
    """What a process drops when told that keys were destroyed elsewhere (``KeyInvalidations``)."""

    def evict(self, tenant: str, subject: str | None) -> None:
        """The subject's cached copies (data key, pseudonym map…), or every one of the tenant when
        ``subject`` is ``None`` (a tenant shred). ``subject`` is the keyed subject hash."""
        ...

    def evict_all(self) -> None:
        """Every cached key and map: what was missed while not listening is unknown."""
        ...


class KeyInvalidations(Protocol):
    """Tells every other process that a subject's (or a tenant's) keys were destroyed, so they drop
    their cached copies within seconds instead of at the keyring's TTL. The message names the keyed
    subject hash (never a subject id); one process hears what every other publishes."""

    errors: int  # listener sessions lost since the process started (each one flushed the caches)

    def publish(self, tenant: str, subject: str | None) -> None:
        """After the key is destroyed. Best effort, never raises: a message that could not be sent is
        logged and counted, and the other processes then drop the key at their TTL."""
        ...

    def subscribe(self, evictions: CacheEvictions) -> None:
        """Start hearing the others (a background listener), calling ``evictions``."""
        ...

    def close(self) -> None: ...
