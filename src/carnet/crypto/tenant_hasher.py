"""Keyed hashes per tenant, under a key that comes from the KMS.

The tenant's hash key is a KMS data key like any subject's, stored wrapped in the key store under a
reserved name and cached unwrapped by the keyring (minutes at most). Subject hashes, sparse-token
hashes and blind-index tokens are HMAC-SHA256 under keys derived from it, one per purpose.
Destroying that stored key (a tenant shred) makes every hash of the tenant unlinkable to the ids it
came from.

The hash key can rotate (``carnet keys rehash``): each generation is its own key-store entry
(``~tenant-hash-key``, then ``~tenant-hash-key.2``…), and the catalog says which one is current.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import threading
from collections.abc import Callable, Iterable

from carnet.crypto.blind_index import blind_tokens
from carnet.crypto.keyring import Keyring
from carnet.ports import Kms

TENANT_ENTRY = "~tenant-hash-key"  # never a subject hash: those are 32 hex characters
_GENERATION = re.compile(r"^~tenant-hash-key(?:\.([2-9]|[1-9][0-9]+))?$")


def is_hash_key_entry(name: str) -> bool:
    return bool(_GENERATION.match(name))


def next_hash_key_entry(entry: str) -> str:
    """``~tenant-hash-key`` → ``~tenant-hash-key.2`` → ``~tenant-hash-key.3``…"""
    found = _GENERATION.match(entry)
    if found is None:
        raise ValueError("not a hash-key entry")
    return f"{TENANT_ENTRY}.{int(found.group(1) or 1) + 1}"


class KmsSubjectHasher:
    """``SubjectHasher`` whose per-tenant key comes from the KMS through the keyring.

    ``entry_of(tenant)`` names the tenant's current hash-key entry (``None``: the first one); it is
    asked once per tenant per process. ``pinned`` builds a hasher on one given entry (a rehash)."""

    def __init__(self, keyring: Keyring, kms: Kms, entry_of: Callable[[str], str | None] | None = None) -> None:
        self._keyring = keyring
        self._kms = kms
        self._entry_of = entry_of or (lambda _tenant: None)
        self._entries: dict[str, str] = {}
        self._lock = threading.Lock()

    @classmethod
    def pinned(cls, keyring: Keyring, kms: Kms, entry: str) -> KmsSubjectHasher:
        if not is_hash_key_entry(entry):
            raise ValueError("not a hash-key entry")
        return cls(keyring, kms, lambda _tenant: entry)

    def hash_key(self, tenant: str) -> str:
        entry = self._entries.get(tenant)
        if entry is None:
            with self._lock:
                entry = self._entries.get(tenant)
                if entry is None:
                    self._kms.ensure_tenant_key(tenant)
                    entry = self._entry_of(tenant) or TENANT_ENTRY
                    self._entries[tenant] = entry
        return entry

    def _derived(self, tenant: str, purpose: bytes) -> bytes:
        root = self._keyring.data_key(tenant, self.hash_key(tenant)).key
        return hmac.new(root, purpose, hashlib.sha256).digest()

    def subject_hash(self, tenant: str, subject_id: str) -> str:
        key = self._derived(tenant, b"carnet/subject-hash/v1")
        return hmac.new(key, subject_id.encode(), hashlib.sha256).hexdigest()[:32]

    def token_key(self, tenant: str) -> bytes:
        """32 bytes, used only to hash sparse (keyword) tokens."""
        return self._derived(tenant, b"carnet/sparse-token/v1")

    def request_token(self, tenant: str, value: str) -> str:
        """128 bits of HMAC: what a record id or an intake's idempotency key is derived from, and the
        fingerprint of a request's body, so neither a caller's key nor a guessed body can be
        recognised on disk without the tenant's key."""
        key = self._derived(tenant, b"carnet/request/v1")
        return hmac.new(key, value.encode(), hashlib.sha256).hexdigest()[:32]

    def blind_tokens(self, tenant: str, identifiers: Iterable[str]) -> tuple[str, ...]:
        values = list(identifiers)
        return blind_tokens(self._derived(tenant, b"carnet/blind-index/v1"), values) if values else ()
