"""``Kms`` on a PKCS#11 HSM (Thales Luna/ProtectServer class, SoftHSM2 in tests), through
``python-pkcs11``.

Each tenant's key-encryption key is a set of AES-256 secret-key objects generated inside the token,
one per version, labelled from a template (``carnet-{tenant}-v{version}``) and sharing a ``CKA_ID``
(the label with an empty version: a cheap exact-match search for a tenant's versions). They are
``CKA_TOKEN``, ``CKA_PRIVATE``, ``CKA_SENSITIVE``, not ``CKA_EXTRACTABLE``, ``CKA_COPYABLE`` or
``CKA_MODIFIABLE``, and can only encrypt and decrypt (no wrap, unwrap, sign, verify or derive): the
key value never leaves the token, not even wrapped.

Data keys are 32 bytes from the token's RNG, encrypted under the tenant key's latest version with
``CKM_AES_GCM`` (a 96-bit IV from the token's RNG, a 128-bit tag, associated data binding the
tenant and the version). The wrapped form is ``hsm:v{N}:`` + base64(iv ‖ ciphertext ‖ tag).
GCM rather than ``CKM_AES_KEY_WRAP_PAD``: key wrapping would need the data key as a token object
(it is wanted as plaintext by the caller anyway), RFC 5649 has no associated data to bind the
tenant and version, and SoftHSM2 exposes ``AES_KEY_WRAP_PAD`` under the mechanism number that
PKCS#11 3.x gives to ``AES_KEY_WRAP_KWP`` (the two disagree across vendors); GCM through
``C_Encrypt``/``C_Decrypt`` is the same everywhere.

Sessions: PKCS#11 login state belongs to the process, not to a session, so the process keeps one
logged-in read/write session per (library, token), shared by every ``Pkcs11Kms`` on that token and
used under a lock. A session that dies (token removed, HSM restarted) is dropped and reopened at the
next call, which is retried once: the service recovers by itself. A wrong PIN is never retried:
HSMs lock the user after a few failures, so the refusal is remembered (as a keyed digest of the
PIN, never the PIN) and repeated without contacting the token. An adapter whose PIN differs from
the one this process is logged in with is refused the same way.

Errors are translated here, and messages name the PKCS#11 error, never a PIN or key material:

- the library, token or session cannot serve us → ``KmsUnavailable`` (503 ``kms_unavailable``);
- the token refuses the PIN (incorrect, locked, expired) → ``KmsDenied`` (a ``KmsUnavailable``);
- a wrapped key does not open (tampered, another tenant's, retired) → ``UnwrapFailed``;
- anything else the token refuses → ``KmsRejected``.

Key versions are only ever created by ``ensure_tenant_key`` and ``rotate`` in one process at a
time (the service, or ``carnet keys rotate`` with the service running): two processes rotating at
the same instant could each create the same next version. Nothing breaks if they do (``unwrap``
tries every object carrying the label, and GCM's tag tells which one is right), but run rotations
from one place.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import hmac
import os
import re
import secrets
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import pkcs11
import pkcs11.exceptions as p11
import structlog
from pkcs11 import Attribute, KeyType, Mechanism, MechanismFlag, ObjectClass
from pkcs11.mechanisms import GCMParams
from pkcs11.types import DecryptMixin, EncryptMixin, Session, Token

from carnet.errors import (
    InvalidInput,
    KmsDenied,
    KmsRejected,
    KmsUnavailable,
    UnwrapFailed,
)
from carnet.ports import WrappedKey

log = structlog.get_logger(__name__)

DEFAULT_LIBRARY = "/usr/lib/softhsm/libsofthsm2.so"
DEFAULT_KEY_TEMPLATE = "carnet-{tenant}-v{version}"
KEY_BITS = 256
DATA_KEY_BYTES = 32
IV_BYTES = 12
TAG_BITS = 128
_PREFIX = re.compile(r"^hsm:v([1-9][0-9]{0,9}):")
_TENANT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
_T = TypeVar("_T")

# Attributes of every tenant key object, beyond class, type, length, label and id.
_KEY_TEMPLATE: dict[Attribute, Any] = {
    Attribute.TOKEN: True,
    Attribute.PRIVATE: True,
    Attribute.SENSITIVE: True,
    Attribute.EXTRACTABLE: False,
    Attribute.COPYABLE: False,
    Attribute.MODIFIABLE: False,
    Attribute.ENCRYPT: True,
    Attribute.DECRYPT: True,
    Attribute.WRAP: False,
    Attribute.UNWRAP: False,
    Attribute.SIGN: False,
    Attribute.VERIFY: False,
    Attribute.DERIVE: False,
}

# The session is gone (or its login is): drop it, open a new one, try once more.
_SESSION_LOST: tuple[type[Exception], ...] = (
    p11.SessionClosed,
    p11.SessionHandleInvalid,
    p11.DeviceRemoved,
    p11.TokenNotPresent,
    p11.UserNotLoggedIn,
)
# The token cannot serve us now.
_UNAVAILABLE: tuple[type[Exception], ...] = (
    *_SESSION_LOST,
    p11.DeviceError,
    p11.DeviceMemory,
    p11.HostMemory,
    p11.SessionCount,
    p11.NoSuchToken,
    p11.TokenNotRecognised,
    p11.FunctionCancelled,
)
# The token refuses our credentials.
_DENIED: tuple[type[Exception], ...] = (
    p11.PinIncorrect,
    p11.PinLocked,
    p11.PinExpired,
    p11.PinInvalid,
    p11.PinLenRange,
    p11.UserPinNotInitialized,
)
# C_Decrypt refusing a ciphertext. SoftHSM2 reports a GCM tag mismatch as CKR_GENERAL_ERROR.
_DOES_NOT_OPEN: tuple[type[Exception], ...] = (
    p11.EncryptedDataInvalid,
    p11.EncryptedDataLenRange,
    p11.DataInvalid,
    p11.DataLenRange,
    p11.GeneralError,
    p11.FunctionFailed,
)


def kek_version(ciphertext: str) -> int:
    """The tenant-key version in an HSM wrapped key (``hsm:v3:…`` → 3)."""
    return _split(ciphertext)[0]


def _split(ciphertext: str) -> tuple[int, str]:
    match = _PREFIX.match(ciphertext)
    if match is None:
        raise UnwrapFailed("not an HSM wrapped key (no hsm:vN: prefix)")
    return int(match.group(1)), ciphertext[match.end() :]


class Pkcs11Kms:
    """``Kms`` on a PKCS#11 token. Thread-safe: calls share one logged-in session under a lock."""

    def __init__(
        self,
        library: str = DEFAULT_LIBRARY,
        *,
        token_label: str,
        user_pin: str,
        key_template: str = DEFAULT_KEY_TEMPLATE,
    ) -> None:
        """Nothing is opened here: the first call (``check()`` at startup) loads the library and
        logs in. The PIN is kept for logging in again after a lost session; it is never logged
        and never appears in ``repr`` or in error messages."""
        if key_template.count("{tenant}") != 1 or key_template.count("{version}") != 1:
            raise ValueError("key_template must contain {tenant} and {version} exactly once each")
        if not user_pin:
            raise ValueError("user_pin is empty")
        self._template = key_template
        self._library = library
        self._token_label = token_label
        self._connection = _connection(library, token_label)
        self._pin = _Pin(user_pin)

    def __repr__(self) -> str:
        return (
            f"Pkcs11Kms(library={self._library!r}, token_label={self._token_label!r}, key_template={self._template!r})"
        )

    # -- the Kms port -------------------------------------------------------------------------

    def ensure_tenant_key(self, tenant: str) -> None:
        """Generates version 1 in the token if the tenant has no version; checks that the existing
        versions are what we would have created (sensitive, never extractable) otherwise."""

        def ensure(session: Session) -> None:
            versions = self._versions(session, tenant)
            if not versions:
                self._generate(session, tenant, 1)
                return
            for version, keys in versions.items():
                for key in keys:
                    attrs = key.get_attributes([Attribute.SENSITIVE, Attribute.EXTRACTABLE])
                    if attrs.get(Attribute.SENSITIVE) is not True or attrs.get(Attribute.EXTRACTABLE) is not False:
                        raise KmsRejected(
                            "HSM key object exists with unsafe settings (not sensitive, or extractable)",
                            tenant=tenant,
                            version=version,
                        )

        self._run("ensure_tenant_key", tenant, ensure)

    def generate_data_key(self, tenant: str) -> tuple[bytes, WrappedKey]:
        """32 bytes from the token's RNG, encrypted under the tenant key's latest version."""

        def generate(session: Session) -> tuple[bytes, WrappedKey]:
            versions = self._versions(session, tenant)
            if not versions:
                raise KmsRejected("no HSM key for this tenant", tenant=tenant)
            data_key = _random(session, DATA_KEY_BYTES)
            return data_key, self._wrap(session, tenant, max(versions), versions, data_key)

        return self._run("generate_data_key", tenant, generate)

    def unwrap(self, wrapped: WrappedKey) -> bytes:
        version, body = _split(wrapped.ciphertext)
        if version != wrapped.kek_version:
            raise UnwrapFailed("wrapped key's version does not match its ciphertext", tenant=wrapped.tenant)
        blob = _decode(body, wrapped.tenant)
        return self._run("unwrap", wrapped.tenant, lambda session: self._open(session, wrapped.tenant, version, blob))

    def rotate(self, tenant: str) -> int:
        """Generates the next version of the tenant's key in the token; returns it."""

        def add_version(session: Session) -> int:
            versions = self._versions(session, tenant)
            if not versions:
                raise KmsRejected("no HSM key for this tenant", tenant=tenant)
            version = max(versions) + 1
            self._generate(session, tenant, version)
            return version

        version = self._run("rotate", tenant, add_version)
        log.info("kms_key_rotated", tenant=tenant, key=self.key_label(tenant, version), version=version)
        return version

    def rewrap(self, wrapped: Sequence[WrappedKey]) -> list[WrappedKey]:
        """Decrypts with the old version and encrypts with the latest, in one session: each
        plaintext exists in this process's memory only between the two calls. Order is kept;
        keys already at the latest version are returned as they are; any failure fails the call."""
        bodies = []
        for item in wrapped:
            version, body = _split(item.ciphertext)
            if version != item.kek_version:
                raise UnwrapFailed("wrapped key's version does not match its ciphertext", tenant=item.tenant)
            bodies.append(_decode(body, item.tenant))

        def rewrap_all(session: Session) -> list[WrappedKey]:
            result = list(wrapped)
            versions_of: dict[str, dict[int, list[pkcs11.SecretKey]]] = {}
            for index, (item, blob) in enumerate(zip(wrapped, bodies, strict=True)):
                versions = versions_of.get(item.tenant)
                if versions is None:
                    versions = versions_of[item.tenant] = self._versions(session, item.tenant)
                    if not versions:
                        raise UnwrapFailed("no HSM key for this tenant", tenant=item.tenant)
                latest = max(versions)
                if item.kek_version >= latest:
                    continue
                data_key = self._open(session, item.tenant, item.kek_version, blob, versions)
                result[index] = self._wrap(session, item.tenant, latest, versions, data_key)
                del data_key
            return result

        tenants = sorted({item.tenant for item in wrapped})
        return self._run("rewrap", tenants[0] if len(tenants) == 1 else None, rewrap_all)

    def check(self) -> None:
        """Opens (or reuses) the logged-in session and draws from the token's RNG: proves the
        library loads, the token is present, the PIN works and the session is alive."""
        self._run("check", None, lambda session: _random(session, 8))

    # -- beyond the port ----------------------------------------------------------------------

    def key_label(self, tenant: str, version: int) -> str:
        _check_tenant(tenant)
        return self._template.format(tenant=tenant, version=version)

    def latest_version(self, tenant: str) -> int:
        versions = self._run("latest_version", tenant, lambda session: self._versions(session, tenant))
        if not versions:
            raise KmsRejected("no HSM key for this tenant", tenant=tenant)
        return max(versions)

    def set_min_decryption_version(self, tenant: str, version: int) -> None:
        """Destroys the tenant's key objects of versions below ``version``: data keys wrapped
        under them never open again (there is no flag to lower back, unlike Transit's
        ``min_decryption_version``: the versions are gone from the token, and from its backups
        once those age out). Call it only after every stored key has been rewrapped."""

        def retire(session: Session) -> list[int]:
            versions = self._versions(session, tenant)
            if not versions:
                raise KmsRejected("no HSM key for this tenant", tenant=tenant)
            if not 1 <= version <= max(versions):
                raise InvalidInput("min_decryption_version must be between 1 and the latest version", version=version)
            destroyed = sorted(v for v in versions if v < version)
            for v in destroyed:
                for key in versions[v]:
                    key.destroy()
            return destroyed

        destroyed = self._run("set_min_decryption_version", tenant, retire)
        log.info("kms_min_decryption_version_set", tenant=tenant, version=version, destroyed_versions=destroyed)

    def destroy_tenant_key(self, tenant: str) -> bool:
        """Destroys every key object of the tenant on the token."""

        def destroy(session: Session) -> bool:
            versions = self._versions(session, tenant)
            for keys in versions.values():
                for key in keys:
                    key.destroy()
            return bool(versions)

        existed = self._run("destroy_tenant_key", tenant, destroy)
        log.warning("kms_tenant_key_destroyed", tenant=tenant)
        return existed

    def close(self) -> None:
        """Logs out and closes the process's session on this token (the next call opens another)."""
        self._connection.close()

    # -- internals ----------------------------------------------------------------------------

    def _run(self, op: str, tenant: str | None, action: Callable[[Session], _T]) -> _T:
        if tenant is not None:
            _check_tenant(tenant)
        return self._connection.run(op, tenant, self._pin, action)

    def _key_id(self, tenant: str) -> bytes:
        return self._template.format(tenant=tenant, version="").encode()

    def _versions(self, session: Session, tenant: str) -> dict[int, list[pkcs11.SecretKey]]:
        """The tenant's key objects by version (several objects for one version only after a
        concurrent rotation in two processes)."""
        label = re.compile(
            "^"
            + re.escape(self._template)
            .replace(re.escape("{tenant}"), re.escape(tenant))
            .replace(re.escape("{version}"), "([1-9][0-9]{0,9})")
            + "$"
        )
        found: dict[int, list[pkcs11.SecretKey]] = {}
        query = {
            Attribute.CLASS: ObjectClass.SECRET_KEY,
            Attribute.KEY_TYPE: KeyType.AES,
            Attribute.ID: self._key_id(tenant),
        }
        for obj in list(session.get_objects(query)):
            if not isinstance(obj, pkcs11.SecretKey):
                continue
            match = label.match(obj.label)
            if match is not None:
                found.setdefault(int(match.group(1)), []).append(obj)
        return found

    def _generate(self, session: Session, tenant: str, version: int) -> None:
        session.generate_key(
            KeyType.AES,
            KEY_BITS,
            id=self._key_id(tenant),
            label=self.key_label(tenant, version),
            store=True,
            capabilities=MechanismFlag.ENCRYPT | MechanismFlag.DECRYPT,
            template=dict(_KEY_TEMPLATE),
        )
        log.info("hsm_tenant_key_generated", tenant=tenant, key=self.key_label(tenant, version), version=version)

    def _wrap(
        self,
        session: Session,
        tenant: str,
        version: int,
        versions: dict[int, list[pkcs11.SecretKey]],
        data_key: bytes,
    ) -> WrappedKey:
        key = versions[version][0]
        if not isinstance(key, EncryptMixin):
            raise KmsRejected("HSM key object cannot encrypt", tenant=tenant, version=version)
        iv = _random(session, IV_BYTES)
        sealed = key.encrypt(data_key, mechanism=Mechanism.AES_GCM, mechanism_param=_gcm(iv, tenant, version))
        if not isinstance(sealed, bytes) or len(sealed) != DATA_KEY_BYTES + TAG_BITS // 8:
            raise KmsRejected("HSM returned a sealed key of the wrong length", tenant=tenant)
        ciphertext = f"hsm:v{version}:" + base64.b64encode(iv + sealed).decode("ascii")
        return WrappedKey(tenant=tenant, ciphertext=ciphertext, kek_version=version)

    def _open(
        self,
        session: Session,
        tenant: str,
        version: int,
        blob: bytes,
        versions: dict[int, list[pkcs11.SecretKey]] | None = None,
    ) -> bytes:
        if versions is None:
            versions = self._versions(session, tenant)
        keys = versions.get(version)
        if not keys:
            raise UnwrapFailed("wrapped key names an unknown or retired key version", tenant=tenant, version=version)
        iv, sealed = blob[:IV_BYTES], blob[IV_BYTES:]
        for key in keys:
            if not isinstance(key, DecryptMixin):
                continue
            try:
                data_key = key.decrypt(sealed, mechanism=Mechanism.AES_GCM, mechanism_param=_gcm(iv, tenant, version))
            except _DOES_NOT_OPEN:
                continue
            if isinstance(data_key, bytes) and len(data_key) == DATA_KEY_BYTES:
                return data_key
        raise UnwrapFailed("wrapped key does not open", tenant=tenant, version=version)


class _Pin:
    """The user PIN, with a keyed digest to compare PINs without keeping a second copy around."""

    __slots__ = ("digest", "value")

    def __init__(self, value: str) -> None:
        self.value = value
        self.digest = hmac.new(_PROCESS_SALT, value.encode(), hashlib.sha256).digest()

    def __repr__(self) -> str:
        return "_Pin(***)"


_PROCESS_SALT = secrets.token_bytes(32)


class _Connection:
    """The process's logged-in session on one token of one library, shared under a lock."""

    def __init__(self, library: str, token_label: str) -> None:
        self._library = library
        self._token_label = token_label
        self._lock = threading.RLock()
        self._session: Session | None = None
        self._logged_in_with: bytes | None = None  # digest of the PIN the token accepted
        self._refused: set[bytes] = set()  # digests of PINs the token refused: never tried again

    def __repr__(self) -> str:
        return f"_Connection(library={self._library!r}, token_label={self._token_label!r})"

    def run(self, op: str, tenant: str | None, pin: _Pin, action: Callable[[Session], _T]) -> _T:
        with self._lock:
            for attempt in (1, 2):
                reused = self._session is not None
                session = self._open(op, tenant, pin)
                try:
                    with _translated(op, tenant):
                        if reused:
                            # Liveness first: python-pkcs11 0.10 reports an object search that
                            # fails on a dead session once more, as an unraisable error in a
                            # destructor. C_GenerateRandom fails cleanly.
                            _random(session, 1)
                        return action(session)
                except KmsUnavailable as exc:
                    if attempt == 2 or not isinstance(exc.__cause__, _SESSION_LOST):
                        raise
                    log.warning("hsm_session_lost", op=op, tenant=tenant, error=type(exc.__cause__).__name__)
                    self._drop()
            raise AssertionError("unreachable")

    def close(self) -> None:
        with self._lock:
            session, self._session = self._session, None
            self._logged_in_with = None
            if session is not None:
                with _translated("close", None):
                    session.close()

    def _open(self, op: str, tenant: str | None, pin: _Pin) -> Session:
        """The live session, or a new one logged in with ``pin``. Caller holds the lock."""
        if pin.digest in self._refused:
            raise KmsDenied("HSM refused this PIN earlier: not trying again (fix the PIN setting)", op=op)
        if self._logged_in_with is not None and not hmac.compare_digest(pin.digest, self._logged_in_with):
            raise KmsDenied("PIN differs from the one this process is logged in to the token with", op=op)
        if self._session is not None:
            return self._session
        token = self._token(op)
        # A refused login leaks the session python-pkcs11 opened for it (it does not close it):
        # one per refused PIN, since a refused PIN is never tried again.
        try:
            with _translated("login", tenant):
                try:
                    session = token.open(rw=True, user_pin=pin.value)
                except p11.UserAlreadyLoggedIn:
                    # The login survived the session we lost (other sessions of this process are
                    # open): the token already accepted this PIN (checked above), share it.
                    if self._logged_in_with is None:
                        raise KmsDenied(
                            "another part of this process is already logged in to the token", op=op
                        ) from None
                    session = token.open(rw=True)
        except KmsDenied as exc:
            if isinstance(exc.__cause__, p11.PinIncorrect | p11.PinLocked | p11.PinInvalid | p11.PinLenRange):
                self._refused.add(pin.digest)
            raise
        self._session, self._logged_in_with = session, pin.digest
        log.info("hsm_logged_in", library=self._library, token=self._token_label)
        return session

    def _token(self, op: str) -> Token:
        with _translated(op, None):
            return _token(self._library, self._token_label)

    def _drop(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            with contextlib.suppress(p11.PKCS11Error):  # it is already gone: that is why we drop it
                session.close()


_registry_lock = threading.Lock()
_connections: dict[tuple[str, str], _Connection] = {}


def _token(library: str, token_label: str) -> Token:
    """The token, from the library loaded (and ``C_Initialize``d) once per process: python-pkcs11
    keeps one ``lib`` per path; its cache is not locked, so we load under ours."""
    if not os.path.isfile(library):
        raise KmsUnavailable("PKCS#11 library not found", library=library)
    with _registry_lock:
        lib = pkcs11.lib(library)
    return lib.get_token(token_label=token_label)


def _connection(library: str, token_label: str) -> _Connection:
    key = (os.path.realpath(library), token_label)
    with _registry_lock:
        connection = _connections.get(key)
        if connection is None:
            connection = _connections[key] = _Connection(key[0], token_label)
        return connection


@contextmanager
def _translated(op: str, tenant: str | None) -> Iterator[None]:
    """python-pkcs11 errors → Carnet errors. Their messages are empty or describe the call; we
    add only the error's class name (never a PIN, never key material)."""
    context: dict[str, object] = {"op": op, "tenant": tenant}
    try:
        yield
    except _DENIED as exc:
        raise KmsDenied(f"HSM refused the PIN ({type(exc).__name__}) for {op}", **context) from exc
    except _UNAVAILABLE as exc:
        raise KmsUnavailable(f"HSM unavailable for {op}: {type(exc).__name__}", **context) from exc
    except p11.NoSuchKey as exc:
        raise KmsRejected(f"HSM has no such key for {op}", **context) from exc
    except p11.PKCS11Error as exc:
        name = type(exc).__name__
        if name == "PKCS11Error":  # the library failed to load, or an untyped return value
            raise KmsUnavailable(f"HSM unavailable for {op}: {str(exc)[:300]}", **context) from exc
        raise KmsRejected(f"HSM rejected {op}: {name}", **context) from exc


def _random(session: Session, n_bytes: int) -> bytes:
    value = session.generate_random(n_bytes * 8)
    if len(value) != n_bytes:
        raise KmsRejected("HSM RNG returned the wrong number of bytes")
    return value


def _gcm(iv: bytes, tenant: str, version: int) -> GCMParams:
    return GCMParams(iv, f"carnet-hsm\x1f{tenant}\x1fv{version}".encode(), TAG_BITS)


def _decode(body: str, tenant: str) -> bytes:
    try:
        blob = base64.b64decode(body, validate=True)
    except (ValueError, binascii.Error) as exc:
        raise UnwrapFailed("wrapped key is not valid base64", tenant=tenant) from exc
    if len(blob) != IV_BYTES + DATA_KEY_BYTES + TAG_BITS // 8:
        raise UnwrapFailed("wrapped key has the wrong length", tenant=tenant)
    return blob


def _check_tenant(tenant: str) -> None:
    if not _TENANT.match(tenant):
        raise InvalidInput("tenant name not usable as a key label", tenant=tenant)
