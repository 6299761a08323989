"""``Kms`` for the embedded default: tenant keys in a local key file. Development only.

The file (``dev-kms.json``, mode 0600, in the key directory, mode 0700, which must not be the data
directory or inside it) holds per-tenant AES-256 key-encryption keys with versions, like Transit:
``rotate`` adds a version, wrapped data keys say theirs in a ``dev:vN:`` prefix, and
``set_min_decryption_version`` retires old ones. Wrapping is AES-256-GCM with a random 96-bit
nonce and associated data binding the tenant and the version.

It protects nothing against anyone who can read the key directory: it exists so Carnet runs
anywhere without a KMS, and production settings refuse it. Several processes may share the file
(the service and ``carnet keys rotate``): changes are made under an exclusive ``flock``, and each
call re-reads the file when it changed on disk.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import fcntl
import json
import os
import re
import secrets
import stat
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from carnet.adapters.kms.versioned import VersionedForm
from carnet.errors import InvalidInput, KmsRejected, UnwrapFailed
from carnet.ports import WrappedKey
from carnet.private_fs import private_dir

log = structlog.get_logger(__name__)

KEY_FILE = "dev-kms.json"
_LOCK_FILE = "dev-kms.lock"
_FORMAT = 1
_KEY_BYTES = 32
_NONCE_BYTES = 12
_FORM = VersionedForm("dev", "a dev KMS wrapped key")
kek_version = _FORM.version  # the tenant-key version of a wrapped key (dev:v3:… → 3)
_TENANT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")


@dataclass(slots=True)
class _TenantKeys:
    versions: dict[int, bytes]
    min_decryption_version: int = 1

    @property
    def latest(self) -> int:
        return max(self.versions)


class DevKms:
    """``Kms`` over a local key file. Never for production: it says so loudly when built."""

    def __init__(self, key_dir: Path, *, data_dir: Path | None = None) -> None:
        key_dir = key_dir.absolute()
        if data_dir is not None and key_dir.resolve().is_relative_to(data_dir.resolve()):
            raise KmsRejected("the dev KMS key directory must not be the data directory or inside it")
        if not key_dir.exists():  # created private, its parents too; an existing loose one is refused below
            private_dir(key_dir)
        _refuse_loose_mode(key_dir, "key directory")
        self._path = key_dir / KEY_FILE
        self._lock_path = key_dir / _LOCK_FILE
        self._mutex = threading.Lock()
        self._tenants: dict[str, _TenantKeys] = {}
        self._seen: tuple[int, int, int, int] | None = None
        log.warning(
            "dev_kms_in_use",
            path=str(self._path),
            note="development KMS, never use in production: tenant keys sit in a local file",
        )

    # -- the Kms port -------------------------------------------------------------------------

    def ensure_tenant_key(self, tenant: str) -> None:
        """Creates version 1 of the tenant's key if it has none (the file is written only then)."""
        _check_tenant(tenant)
        with self._mutex:
            self._refresh()
            if tenant in self._tenants:
                return

        def add(tenants: dict[str, _TenantKeys]) -> None:
            tenants.setdefault(tenant, _TenantKeys(versions={1: secrets.token_bytes(_KEY_BYTES)}))

        self._update(add)

    def generate_data_key(self, tenant: str) -> tuple[bytes, WrappedKey]:
        """A random 256-bit key, wrapped under the tenant key's latest version."""
        data_key = secrets.token_bytes(_KEY_BYTES)
        return data_key, self._wrap(tenant, data_key)

    def unwrap(self, wrapped: WrappedKey) -> bytes:
        version, body = _FORM.split(wrapped.ciphertext)
        if version != wrapped.kek_version:
            raise UnwrapFailed("wrapped key's version does not match its ciphertext", tenant=wrapped.tenant)
        keys = self._tenant(wrapped.tenant)
        if version < keys.min_decryption_version:
            raise UnwrapFailed("wrapped key's version is retired (below min_decryption_version)", tenant=wrapped.tenant)
        kek = keys.versions.get(version)
        if kek is None:
            raise UnwrapFailed("wrapped key names an unknown key version", tenant=wrapped.tenant)
        try:
            blob = base64.b64decode(body, validate=True)
            data_key = AESGCM(kek).decrypt(blob[:_NONCE_BYTES], blob[_NONCE_BYTES:], _aad(wrapped.tenant, version))
        except (InvalidTag, ValueError, binascii.Error) as exc:
            raise UnwrapFailed("wrapped key does not open", tenant=wrapped.tenant) from exc
        if len(data_key) != _KEY_BYTES:
            raise UnwrapFailed("wrapped key holds a key of the wrong length", tenant=wrapped.tenant)
        return data_key

    def rotate(self, tenant: str) -> int:
        """Adds a version to the tenant's key; returns it."""
        _check_tenant(tenant)
        new_version = 0

        def add_version(tenants: dict[str, _TenantKeys]) -> None:
            nonlocal new_version
            keys = tenants.get(tenant)
            if keys is None:
                raise KmsRejected("no dev KMS key for this tenant", tenant=tenant)
            new_version = keys.latest + 1
            keys.versions[new_version] = secrets.token_bytes(_KEY_BYTES)

        self._update(add_version)
        log.info("kms_key_rotated", tenant=tenant, version=new_version)
        return new_version

    def rewrap(self, wrapped: Sequence[WrappedKey]) -> list[WrappedKey]:
        """Unwrap and wrap again under the latest version (in this process: there is no KMS)."""
        result: list[WrappedKey] = []
        for item in wrapped:
            latest = self._tenant(item.tenant).latest
            result.append(item if item.kek_version >= latest else self._wrap(item.tenant, self.unwrap(item)))
        return result

    def check(self) -> None:
        """Reads the key file (if any), so a file made unreadable or unsafe shows up here."""
        with self._mutex:
            self._refresh()

    # -- beyond the port ----------------------------------------------------------------------

    def set_min_decryption_version(self, tenant: str, version: int) -> None:
        """Wrapped keys of older versions stop opening (as Transit's ``min_decryption_version``)."""
        _check_tenant(tenant)

        def retire(tenants: dict[str, _TenantKeys]) -> None:
            keys = tenants.get(tenant)
            if keys is None:
                raise KmsRejected("no dev KMS key for this tenant", tenant=tenant)
            if not 1 <= version <= keys.latest:
                raise InvalidInput("min_decryption_version must be between 1 and the latest version", version=version)
            keys.min_decryption_version = version

        self._update(retire)

    def latest_version(self, tenant: str) -> int:
        return self._tenant(tenant).latest

    def destroy_tenant_key(self, tenant: str) -> bool:
        """Removes every version of the tenant's key from the file (rewritten atomically)."""
        _check_tenant(tenant)
        existed = False

        def drop(tenants: dict[str, _TenantKeys]) -> None:
            nonlocal existed
            existed = tenants.pop(tenant, None) is not None

        self._update(drop)
        log.warning("kms_tenant_key_destroyed", tenant=tenant)
        return existed

    # -- internals ----------------------------------------------------------------------------

    def _wrap(self, tenant: str, data_key: bytes) -> WrappedKey:
        keys = self._tenant(tenant)
        version = keys.latest
        nonce = secrets.token_bytes(_NONCE_BYTES)
        sealed = AESGCM(keys.versions[version]).encrypt(nonce, data_key, _aad(tenant, version))
        ciphertext = _FORM.join(version, base64.b64encode(nonce + sealed).decode("ascii"))
        return WrappedKey(tenant=tenant, ciphertext=ciphertext, kek_version=version)

    def _tenant(self, tenant: str) -> _TenantKeys:
        _check_tenant(tenant)
        with self._mutex:
            self._refresh()
            keys = self._tenants.get(tenant)
        if keys is None:
            raise KmsRejected("no dev KMS key for this tenant", tenant=tenant)
        return keys

    def _update(self, change: Callable[[dict[str, _TenantKeys]], None]) -> None:
        """Read, change and write the file under an exclusive lock (other processes included)."""
        with self._mutex, self._file_lock():
            self._seen = None
            self._refresh()
            tenants = {t: _TenantKeys(dict(k.versions), k.min_decryption_version) for t, k in self._tenants.items()}
            change(tenants)
            self._write(tenants)
            self._tenants = tenants
            self._seen = _stamp(self._path)

    @contextlib.contextmanager
    def _file_lock(self) -> Iterator[None]:
        fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the lock

    def _refresh(self) -> None:
        """Re-read the file if it changed since we last read it. Caller holds ``_mutex``."""
        try:
            stamp = _stamp(self._path)
        except FileNotFoundError:
            self._tenants, self._seen = {}, None
            return
        if stamp == self._seen:
            return
        _refuse_loose_mode(self._path, "key file")
        self._tenants = _parse(self._path.read_bytes(), self._path)
        self._seen = stamp

    def _write(self, tenants: dict[str, _TenantKeys]) -> None:
        """Atomic replace: a temporary 0600 file in the same directory, fsync, rename, fsync dir."""
        document = {
            "format": _FORMAT,
            "warning": "development KMS key file: never use in production",
            "tenants": {
                tenant: {
                    "min_decryption_version": keys.min_decryption_version,
                    "versions": {str(v): base64.b64encode(k).decode("ascii") for v, k in sorted(keys.versions.items())},
                }
                for tenant, keys in sorted(tenants.items())
            },
        }
        tmp = self._path.with_name(f".{KEY_FILE}.{secrets.token_hex(4)}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(json.dumps(document, indent=1).encode())
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self._path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        dir_fd = os.open(self._path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def _aad(tenant: str, version: int) -> bytes:
    return f"carnet-dev-kms\x1f{tenant}\x1fv{version}".encode()


def _check_tenant(tenant: str) -> None:
    if not _TENANT.match(tenant):
        raise InvalidInput("tenant name not usable as a key name", tenant=tenant)


def _stamp(path: Path) -> tuple[int, int, int, int]:
    st = path.stat()
    return st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size


def _refuse_loose_mode(path: Path, what: str) -> None:
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        # The path is for the operator's log; the error (which an API caller may see) does not name it.
        log.error("dev_kms_loose_mode", what=what, path=str(path), mode=f"{mode:o}")
        raise KmsRejected(f"the dev KMS {what} is accessible to group or others (see the server log): chmod go-rwx")


def _parse(raw: bytes, path: Path) -> dict[str, _TenantKeys]:
    try:
        document: Any = json.loads(raw)
        if document.get("format") != _FORMAT:
            raise ValueError("unknown format")
        tenants: dict[str, _TenantKeys] = {}
        for tenant, entry in document["tenants"].items():
            versions = {int(v): base64.b64decode(k, validate=True) for v, k in entry["versions"].items()}
            if not versions or any(v < 1 or len(k) != _KEY_BYTES for v, k in versions.items()):
                raise ValueError("bad key version")
            tenants[tenant] = _TenantKeys(versions, int(entry["min_decryption_version"]))
    except (ValueError, KeyError, TypeError, AttributeError, binascii.Error) as exc:
        # Logged with its path and the error's type only (its text may quote the file); the error a
        # caller may see names neither.
        log.error("dev_kms_file_unreadable", path=str(path), error_type=type(exc).__name__)
        raise KmsRejected("the dev KMS key file is unreadable (see the server log)") from None
    return tenants
