"""API keys: ``crn_<key id>_<secret>``, stored only as HMAC-SHA256(pepper, key)."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from carnet.errors import Forbidden, InvalidInput, Unauthenticated
from carnet.ports import ApiKeyRecord, Catalog

ROLES = ("agent", "dpo", "admin")
TENANT = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")
_KEY = re.compile(r"^crn_([0-9a-f]{12})_([A-Za-z0-9_-]{20,64})$")


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: the tenant comes from here and nowhere else."""

    key_id: str
    tenant: str
    roles: tuple[str, ...]

    def require(self, role: str) -> None:
        if role not in self.roles and "admin" not in self.roles:
            raise Forbidden(f"this key lacks the '{role}' role")


def hash_key(pepper: bytes, key: str) -> str:
    return hmac.new(pepper, key.encode(), hashlib.sha256).hexdigest()


def create_key(catalog: Catalog, pepper: bytes, *, tenant: str, roles: Sequence[str]) -> tuple[str, ApiKeyRecord]:
    if not TENANT.match(tenant):
        raise InvalidInput("tenant must be 1-63 characters of lowercase letters, digits, '_' and '-'")
    unknown = [r for r in roles if r not in ROLES]
    if not roles or unknown:
        raise InvalidInput(f"roles must be among {', '.join(ROLES)}")
    key_id = secrets.token_hex(6)
    key = f"crn_{key_id}_{secrets.token_urlsafe(32)}"
    record = catalog.add_api_key(key_id=key_id, key_hash=hash_key(pepper, key), tenant=tenant,
                                 roles=list(dict.fromkeys(roles)))
    return key, record


def authenticate(catalog: Catalog, pepper: bytes, key: str | None) -> Principal:
    if not key or not _KEY.match(key):
        raise Unauthenticated("missing or malformed API key")
    record = catalog.find_api_key(hash_key(pepper, key))
    if record is None or record.revoked:
        raise Unauthenticated("unknown or revoked API key")
    return Principal(record.key_id, record.tenant, record.roles)
