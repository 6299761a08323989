"""Keyed hashes per tenant, under a key that comes from the KMS.

The tenant's hash key is a KMS data key like any subject's, stored wrapped in the key store under a
reserved name and cached unwrapped by the keyring (minutes at most). Subject hashes, sparse-token
hashes and blind-index tokens are HMAC-SHA256 under keys derived from it, one per purpose.
Destroying that stored key (a tenant shred) makes every hash of the tenant unlinkable to the ids it
came from.
"""

from __future__ import annotations

import hashlib
import hmac
import threading
from collections.abc import Iterable

from carnet.crypto.blind_index import blind_tokens
from carnet.crypto.keyring import Keyring
from carnet.ports import Kms

TENANT_ENTRY = "~tenant-hash-key"  # never a subject hash: those are 32 hex characters


class KmsSubjectHasher:
    """``SubjectHasher`` whose per-tenant key comes from the KMS through the keyring."""

    def __init__(self, keyring: Keyring, kms: Kms) -> None:
        self._keyring = keyring
        self._kms = kms
        self._ready: set[str] = set()
        self._lock = threading.Lock()

    def _derived(self, tenant: str, purpose: bytes) -> bytes:
        if tenant not in self._ready:
            with self._lock:
                if tenant not in self._ready:
                    self._kms.ensure_tenant_key(tenant)
                    self._ready.add(tenant)
        root = self._keyring.data_key(tenant, TENANT_ENTRY).key
        return hmac.new(root, purpose, hashlib.sha256).digest()

    def subject_hash(self, tenant: str, subject_id: str) -> str:
        key = self._derived(tenant, b"carnet/subject-hash/v1")
        return hmac.new(key, subject_id.encode(), hashlib.sha256).hexdigest()[:32]

    def token_key(self, tenant: str) -> bytes:
        """32 bytes, used only to hash sparse (keyword) tokens."""
        return self._derived(tenant, b"carnet/sparse-token/v1")

    def blind_tokens(self, tenant: str, identifiers: Iterable[str]) -> tuple[str, ...]:
        values = list(identifiers)
        return blind_tokens(self._derived(tenant, b"carnet/blind-index/v1"), values) if values else ()
