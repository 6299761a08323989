"""API keys: ``crn_<key id>_<secret>``, stored only as HMAC-SHA256(pepper, key)."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from carnet.errors import Forbidden, InvalidInput, NotFound, Unauthenticated
from carnet.ports import ApiKeyRecord, ApiKeys
from carnet.services.ratelimit import parse_rate

ROLES = ("agent", "dpo", "admin", "supervisor")
_ADMIN_GRANTS = frozenset({"agent", "admin"})  # what any admin key may grant (``grantable``)
TENANT = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_KEY = re.compile(r"^crn_([0-9a-f]{12})_([A-Za-z0-9_-]{20,64})$")
# A key belongs to the store it was made in (``carnet apikey create --data-dir``): the likeliest cause of
# this answer on a new machine is a key made for another store than the server's, so the server's log
# names the store it reads (never this answer: it goes to anyone).
UNKNOWN_KEY = ("unknown or revoked API key (a key works only with the store it was made in: the server's log "
               "names its store)")


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: the tenant comes from here and nowhere else."""

    key_id: str
    tenant: str
    roles: tuple[str, ...]
    rate_limit: str | None = None

    def require(self, *roles: str) -> None:
        """Pass if the key has one of ``roles``. Roles do not imply each other: an ``admin`` key manages
        keys and maintenance but reads no one's memories unless it also has ``agent`` or ``dpo``."""
        if not set(roles).intersection(self.roles):
            raise Forbidden(f"this key lacks the {' or '.join(repr(r) for r in roles)} role")


def hash_key(pepper: bytes, key: str) -> str:
    return hmac.new(pepper, key.encode(), hashlib.sha256).hexdigest()


def check_key_request(*, tenant: str, roles: Sequence[str], rate_limit: str | None = None,
                      name: str | None = None) -> None:
    """What ``create_key`` refuses (``InvalidInput``), checked without creating anything: the door
    runs it before the audit entry of the creation is written."""
    if not TENANT.match(tenant):
        raise InvalidInput("tenant must be 1-63 characters of lowercase letters, digits, '_' and '-'")
    unknown = [r for r in roles if r not in ROLES]
    if not roles or unknown:
        raise InvalidInput(f"roles must be among {', '.join(ROLES)}")
    if rate_limit is not None:
        parse_rate(rate_limit)
    if name is not None and not _NAME.match(name):
        raise InvalidInput("name must be 1-64 characters of letters, digits, '.', '_' and '-'")


def grantable(creator: Sequence[str]) -> tuple[str, ...]:
    """The roles a key holding ``creator`` (which must include ``admin``) may put on a new key: ``agent``
    and ``admin`` (provisioning is the admin's job), and ``dpo`` or ``supervisor`` only if it holds them
    itself. Those two read a whole dossier (export) or decide what every assistant follows (approval):
    key creation never hands them to someone who could not use them already (issue 46, finding 6). An
    operator on the host (``carnet apikey create``) holds the roles it asks for."""
    return tuple(r for r in ROLES if r in _ADMIN_GRANTS or r in creator)


def check_grant(*, creator: Sequence[str], roles: Sequence[str]) -> None:
    """``Forbidden`` when ``roles`` asks for a role the creator may not grant (``grantable``)."""
    withheld = sorted({r for r in roles if r in ROLES} - set(grantable(creator)))
    if withheld:
        raise Forbidden(f"this key cannot grant the {' or '.join(repr(r) for r in withheld)} role: only a key "
                        "holding it, or `carnet apikey create` on the server's host, can")


def create_key(catalog: ApiKeys, pepper: bytes, *, tenant: str, roles: Sequence[str],
               rate_limit: str | None = None, name: str | None = None) -> tuple[str, ApiKeyRecord]:
    check_key_request(tenant=tenant, roles=roles, rate_limit=rate_limit, name=name)
    key_id = secrets.token_hex(6)
    key = f"crn_{key_id}_{secrets.token_urlsafe(32)}"
    record = catalog.add_api_key(key_id=key_id, key_hash=hash_key(pepper, key), tenant=tenant,
                                 roles=list(dict.fromkeys(roles)), rate_limit=rate_limit, name=name)
    return key, record


def revoke_key(catalog: ApiKeys, *, key_id: str, tenant: str | None = None) -> None:
    """Revoke at once: the next request with that key gets 401. ``tenant`` confines an admin key to
    its own tenant's keys (another tenant's key is "not found", like an unknown one)."""
    if not re.fullmatch(r"[0-9a-f]{12}", key_id) or not catalog.revoke_api_key(key_id, tenant=tenant):
        raise _no_key(key_id)


def key_owner(catalog: ApiKeys, key_id: str) -> str | None:
    """The tenant of key ``key_id`` (revoked or not), or None for an unknown (or malformed) id."""
    if not re.fullmatch(r"[0-9a-f]{12}", key_id):
        return None
    return next((k.tenant for k in catalog.api_keys() if k.key_id == key_id), None)


def check_key_exists(catalog: ApiKeys, *, key_id: str, tenant: str) -> None:
    """``NotFound`` unless ``key_id`` is a key of ``tenant`` (another tenant's key is not found either)."""
    if not any(k.key_id == key_id for k in catalog.api_keys(tenant)):
        raise _no_key(key_id)


def _no_key(key_id: str) -> NotFound:
    return NotFound(f"no API key {key_id}" if re.fullmatch(r"[0-9a-f]{12}", key_id) else "no such API key")


def well_formed(key: str | None) -> bool:
    """Whether ``key`` looks like a Carnet key at all (no lookup: a malformed key costs nothing)."""
    return bool(key) and _KEY.match(key or "") is not None


def key_id_of(key: str | None) -> str | None:
    """The id a well-formed key carries (``crn_<id>_<secret>``; the id is no secret), else None."""
    found = _KEY.match(key or "")
    return found.group(1) if found else None


def authenticate(catalog: ApiKeys, pepper: bytes, key: str | None, cache: KeyCache | None = None) -> Principal:
    """The principal of ``key``, looked up in ``catalog``; with ``cache``, kept there for ``cached``."""
    if not key or not well_formed(key):
        raise Unauthenticated("missing or malformed API key")
    version = catalog.api_keys_version() if cache is not None else None  # read before the lookup (``KeyCache``)
    key_hash = hash_key(pepper, key)
    record = catalog.find_api_key(key_hash)
    if record is None or record.revoked:
        raise Unauthenticated(UNKNOWN_KEY)
    principal = Principal(record.key_id, record.tenant, record.roles, record.rate_limit)
    if cache is not None and version is not None:
        cache.keep(version, key_hash, principal)
    return principal


class KeyCache:
    """Keys verified by ``authenticate``, answered again without a lookup while the catalog's
    ``api_keys_version`` stays what it was when they were looked up. A revocation, by this process or
    another (``carnet apikey revoke`` beside the server), changes the version: every key is looked up
    again from the next request on, as without the cache. Only valid keys are kept (an unknown key
    always costs a lookup) and at most ``size`` of them (all are dropped past it). A catalog with no
    cheap version (PostgreSQL: several nodes share it) keeps nothing here. Thread-safe: the event loop
    reads, worker threads fill."""

    def __init__(self, size: int = 10_000) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._version: Hashable | None = None
        self._keys: dict[str, Principal] = {}

    def cached(self, catalog: ApiKeys, pepper: bytes, key: str | None) -> Principal | None:
        """The principal of ``key`` if it was verified at the catalog's current version; ``None`` means
        "look it up" (never "refused")."""
        if not key or not well_formed(key):
            return None
        version = catalog.api_keys_version()
        if version is None:
            return None
        key_hash = hash_key(pepper, key)  # outside the lock: the worker threads' ``keep`` waits on it
        with self._lock:
            if version != self._version:
                self._version, self._keys = version, {}
                return None
            return self._keys.get(key_hash)

    def keep(self, version: Hashable, key_hash: str, principal: Principal) -> None:
        """Keep what a lookup begun at ``version`` found, unless the version has moved on since."""
        with self._lock:
            if version != self._version:
                if self._keys:  # a newer version was seen: what this lookup read may be older
                    return
                self._version = version
            if len(self._keys) >= self._size:
                self._keys = {}
            self._keys[key_hash] = principal


def authenticate_hash(catalog: ApiKeys, key_hash: str) -> Principal:
    """The principal of the key whose keyed hash is ``key_hash`` (``hash_key``), as ``authenticate``
    would give it: a console session keeps this hash, never the key, and checks it again on every
    request, so a revoked key (or one whose roles changed) takes effect at the session's next page."""
    record = catalog.find_api_key(key_hash)
    if record is None or record.revoked:
        raise Unauthenticated("unknown or revoked API key")
    return Principal(record.key_id, record.tenant, record.roles, record.rate_limit)
