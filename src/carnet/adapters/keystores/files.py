"""The embedded default key store: wrapped data keys in files, in a directory beside (never inside)
the data dir. The ``KeyStore`` port and its rules are in :mod:`carnet.ports`; Vault KV v2, for
production, is :mod:`carnet.adapters.keystores.vault_kv`."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from carnet.crypto.errors import KeyStoreCorrupt
from carnet.fileio import fsync_dir
from carnet.ports import KeyStore, StoredKey, WrappedKey

__all__ = ["FileKeyStore", "KeyStore", "StoredKey", "entry_doc", "entry_from_doc"]


class FileKeyStore:
    """The embedded default: ``<directory>/t-<tenant>/s-<subject>.json``, files 0600, directories 0700.

    Writes go to a temp file in the same directory, are fsynced, then renamed over the target, so a
    crash leaves the old entry or the new one, never half of one. Mutations hold an exclusive
    ``flock`` on ``<directory>/.lock`` so ``carnet keys rewrap`` in another process cannot race an
    erasure. Reads take no lock (a rename is atomic).

    Deletion overwrites the file before unlinking it. That is best effort only (journals, SSD
    remapping, earlier versions left by renames): the real guarantees are that this directory is
    kept out of data backups, and that after ``rotate`` + ``rewrap`` the KMS's raised
    min_decryption_version refuses any stale wrapped copy.
    """

    def __init__(self, directory: Path, *, data_dir: Path | None = None) -> None:
        root = directory.resolve()
        if data_dir is not None and root.is_relative_to(data_dir.resolve()):
            raise ValueError("the key store must not be inside the data dir: backups would carry the keys")
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(root, 0o700)
        self._root = root

    def get(self, tenant: str, subject: str) -> StoredKey | None:
        path = self._path(tenant, subject)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        key = _decode(raw, str(path))
        if (key.tenant, key.subject) != (tenant, subject):
            raise KeyStoreCorrupt(str(path), "entry belongs to another subject")
        return key

    def put_if_absent(self, key: StoredKey) -> StoredKey:
        with self._locked():
            existing = self.get(key.tenant, key.subject)
            if existing is not None:
                return existing
            self._write(key)
            return key

    def replace(self, old: StoredKey, new: StoredKey) -> bool:
        if (old.tenant, old.subject, old.key_id) != (new.tenant, new.subject, new.key_id):
            raise ValueError("replace keeps the tenant, the subject and the key id")
        with self._locked():
            if self.get(old.tenant, old.subject) != old:
                return False
            self._write(new)
            return True

    def delete(self, tenant: str, subject: str) -> bool:
        path = self._path(tenant, subject)
        with self._locked():
            try:
                fd = os.open(path, os.O_WRONLY)
            except FileNotFoundError:
                return False
            try:
                os.write(fd, b"\0" * os.fstat(fd).st_size)
                os.fsync(fd)
            finally:
                os.close(fd)
            path.unlink()
            fsync_dir(path.parent)
            return True

    def scan(self, tenant: str) -> Iterator[StoredKey]:
        folder = self._tenant_dir(tenant)
        if not folder.is_dir():
            return
        with os.scandir(folder) as entries:
            names = sorted(e.name for e in entries if e.name.startswith("s-") and e.name.endswith(".json"))
        for name in names:
            with contextlib.suppress(FileNotFoundError):  # deleted since the scan
                yield _decode((folder / name).read_bytes(), str(folder / name))

    def _write(self, key: StoredKey) -> None:
        path = self._path(key.tenant, key.subject)
        path.parent.mkdir(exist_ok=True, mode=0o700)
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(_encode(key))
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        fsync_dir(path.parent)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        fd = os.open(self._root / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def _tenant_dir(self, tenant: str) -> Path:
        return self._root / ("t-" + _safe(tenant))

    def _path(self, tenant: str, subject: str) -> Path:
        return self._tenant_dir(tenant) / f"s-{_safe(subject)}.json"


def _safe(name: str) -> str:
    """A reversible, separator-free file name part (the prefix keeps it from being '.', '..' or hidden)."""
    encoded = quote(name, safe="")
    if not name or len(encoded) > 200:
        raise ValueError("tenant and subject names must be 1 to 200 characters once encoded")
    return encoded


def entry_doc(key: StoredKey) -> dict[str, Any]:
    """The stored form of an entry (shared by every key store): no key material in clear."""
    w = key.wrapped
    return {"v": 1, "tenant": w.tenant, "subject": key.subject, "key_id": key.key_id,
            "ciphertext": w.ciphertext, "kek_version": w.kek_version}  # fmt: skip


def entry_from_doc(doc: Mapping[str, Any], where: str) -> StoredKey:
    try:
        if doc["v"] != 1:
            raise KeyStoreCorrupt(where, "unknown entry version")
        wrapped = WrappedKey(tenant=str(doc["tenant"]), ciphertext=str(doc["ciphertext"]),
                             kek_version=int(doc["kek_version"]))  # fmt: skip
        return StoredKey(subject=str(doc["subject"]), key_id=str(doc["key_id"]), wrapped=wrapped)
    except (KeyError, TypeError, ValueError, ArithmeticError) as exc:  # kek_version: 1e400 is inf
        raise KeyStoreCorrupt(where, "malformed entry") from exc


def _encode(key: StoredKey) -> bytes:
    return json.dumps(entry_doc(key), sort_keys=True).encode()


def _decode(raw: bytes, where: str) -> StoredKey:
    try:
        doc = json.loads(raw)
    except ValueError as exc:
        raise KeyStoreCorrupt(where, "malformed entry") from exc
    if not isinstance(doc, dict):
        raise KeyStoreCorrupt(where, "malformed entry")
    return entry_from_doc(doc, where)
