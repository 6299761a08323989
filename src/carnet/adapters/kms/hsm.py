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
import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import pkcs11
import pkcs11.exceptions as p11
import structlog
from pkcs11 import Attribute, KeyType, Mechanism, MechanismFlag, ObjectClass
from pkcs11.mechanisms import GCMParams
from pkcs11.types import DecryptMixin, EncryptMixin, Session

from carnet.adapters.kms.hsm_session import Pin, connection, token_random
from carnet.adapters.kms.versioned import VersionedForm
from carnet.errors import (
    InvalidInput,
    KmsRejected,
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
_FORM = VersionedForm("hsm", "an HSM wrapped key")
kek_version = _FORM.version  # the tenant-key version of a wrapped key (hsm:v3:… → 3)
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

# C_Decrypt refusing a ciphertext. SoftHSM2 reports a GCM tag mismatch as CKR_GENERAL_ERROR.
_DOES_NOT_OPEN: tuple[type[Exception], ...] = (
    p11.EncryptedDataInvalid,
    p11.EncryptedDataLenRange,
    p11.DataInvalid,
    p11.DataLenRange,
    p11.GeneralError,
    p11.FunctionFailed,
)


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
        self._connection = connection(library, token_label)
        self._pin = Pin(user_pin)

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
            data_key = token_random(session, DATA_KEY_BYTES)
            return data_key, self._wrap(session, tenant, max(versions), versions, data_key)

        return self._run("generate_data_key", tenant, generate)

    def unwrap(self, wrapped: WrappedKey) -> bytes:
        version, body = _FORM.split(wrapped.ciphertext)
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
            version, body = _FORM.split(item.ciphertext)
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
        self._run("check", None, lambda session: token_random(session, 8))

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
        iv = token_random(session, IV_BYTES)
        sealed = key.encrypt(data_key, mechanism=Mechanism.AES_GCM, mechanism_param=_gcm(iv, tenant, version))
        if not isinstance(sealed, bytes) or len(sealed) != DATA_KEY_BYTES + TAG_BITS // 8:
            raise KmsRejected("HSM returned a sealed key of the wrong length", tenant=tenant)
        ciphertext = _FORM.join(version, base64.b64encode(iv + sealed).decode("ascii"))
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
