"""``KeyStore`` on Vault/OpenBao KV v2: where production keeps the wrapped data keys.

One secret per (tenant, subject) at ``{mount}/data/{prefix}/{tenant}/{subject}`` holding the same
document as the file store (tenant, subject, key id, Transit ciphertext, KEK version): no key
material in clear, and nothing that a data backup carries. The rules of the port map onto KV v2:

- ``put_if_absent`` writes with ``cas=0`` (only if the path has no live version); if another writer
  won, its entry is read back and returned;
- ``replace`` writes with ``cas=<version read>``, so an erasure between the read and the write
  (which deletes the metadata) makes the write fail instead of resurrecting the key;
- ``delete`` is ``DELETE {mount}/metadata/...``: every version and the metadata go, not the soft
  delete that ``vault kv delete`` does (a soft-deleted version can be undeleted);
- every secret is created with ``max_versions=1``, so a rewrap does not leave the previous wrapped
  copy behind as an older version.

The session (login, renewal, error translation) is shared with the Transit KMS when both are used.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, unquote

import hvac.exceptions as hvac_errors

from carnet.adapters.keystores.files import entry_doc, entry_from_doc
from carnet.adapters.vault.session import VaultSession
from carnet.crypto.errors import KeyStoreCorrupt
from carnet.errors import KmsRejected
from carnet.ports import StoredKey


class VaultKvKeyStore:
    def __init__(self, session: VaultSession, *, mount: str = "secret", prefix: str = "carnet/data-keys") -> None:
        self._session = session
        self._kv = session.client.secrets.kv.v2
        self._mount = mount.strip("/")
        self._prefix = prefix.strip("/")
        if not self._mount or not self._prefix:
            raise ValueError("the KV mount and prefix must not be empty")

    # -- the KeyStore port ------------------------------------------------------------------------

    def get(self, tenant: str, subject: str) -> StoredKey | None:
        found = self._read(tenant, subject)
        return None if found is None else found[0]

    def put_if_absent(self, key: StoredKey) -> StoredKey:
        path = self._path(key.tenant, key.subject)
        if self._write(path, key, cas=0, tenant=key.tenant):
            self._session.call("kv_metadata", key.tenant, lambda: self._kv.update_metadata(
                path, max_versions=1, mount_point=self._mount))
            return key
        existing = self.get(key.tenant, key.subject)
        if existing is None:  # written then erased between our two calls: try once more
            return self.put_if_absent(key)
        return existing

    def replace(self, old: StoredKey, new: StoredKey) -> bool:
        if (old.tenant, old.subject, old.key_id) != (new.tenant, new.subject, new.key_id):
            raise ValueError("replace keeps the tenant, the subject and the key id")
        found = self._read(old.tenant, old.subject)
        if found is None or found[0] != old:
            return False
        return self._write(self._path(new.tenant, new.subject), new, cas=found[1], tenant=new.tenant)

    def delete(self, tenant: str, subject: str) -> bool:
        path = self._path(tenant, subject)
        existed = self._read(tenant, subject) is not None
        self._session.call("kv_destroy", tenant, lambda: self._kv.delete_metadata_and_all_versions(
            path, mount_point=self._mount))
        return existed

    def scan(self, tenant: str) -> Iterator[StoredKey]:
        folder = f"{self._prefix}/{_segment(tenant)}"
        try:
            listed = self._session.call("kv_list", tenant, lambda: self._kv.list_secrets(
                folder, mount_point=self._mount))
        except KmsRejected as exc:
            if isinstance(exc.__cause__, hvac_errors.InvalidPath):
                return  # no entry for this tenant
            raise
        names = listed.get("data", {}).get("keys", []) if isinstance(listed, dict) else []
        for name in sorted(n for n in names if isinstance(n, str) and not n.endswith("/")):
            key = self.get(tenant, unquote(name))
            if key is not None:  # deleted since the listing
                yield key

    # -- internals -------------------------------------------------------------------------------

    def _path(self, tenant: str, subject: str) -> str:
        return f"{self._prefix}/{_segment(tenant)}/{_segment(subject)}"

    def _read(self, tenant: str, subject: str) -> tuple[StoredKey, int] | None:
        path = self._path(tenant, subject)
        try:
            response = self._session.call("kv_read", tenant, lambda: self._kv.read_secret_version(
                path, mount_point=self._mount, raise_on_deleted_version=True))
        except KmsRejected as exc:
            if isinstance(exc.__cause__, hvac_errors.InvalidPath):
                return None
            raise
        data = response.get("data") if isinstance(response, dict) else None
        if not isinstance(data, dict) or not isinstance(data.get("data"), dict):
            raise KeyStoreCorrupt(path, "KV answer without data")
        key = entry_from_doc(data["data"], path)
        if (key.tenant, key.subject) != (tenant, subject):
            raise KeyStoreCorrupt(path, "entry belongs to another subject")
        version = (data.get("metadata") or {}).get("version")
        if not isinstance(version, int):
            raise KeyStoreCorrupt(path, "KV answer without a version")
        return key, version

    def _write(self, path: str, key: StoredKey, *, cas: int, tenant: str) -> bool:
        """``False`` when the check-and-set fails (someone else wrote or deleted in between)."""
        doc: dict[str, Any] = entry_doc(key)
        try:
            self._session.call("kv_write", tenant, lambda: self._kv.create_or_update_secret(
                path, secret=doc, cas=cas, mount_point=self._mount))
        except KmsRejected as exc:
            if isinstance(exc.__cause__, hvac_errors.InvalidRequest) and "check-and-set" in str(exc):
                return False
            raise
        return True


def _segment(name: str) -> str:
    """A path segment that cannot climb (``..``) or nest (``/``)."""
    encoded = quote(name, safe="")
    if not name or len(encoded) > 200 or encoded in (".", ".."):
        raise ValueError("tenant and subject names must be 1 to 200 characters once encoded")
    return encoded
