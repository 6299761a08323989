"""Development key material: a local random master key file (0600) in the key directory.

It exists so the embedded default runs anywhere. It is not a KMS: production settings refuse it
(see ``carnet.config``), and the KMS issue replaces it with Vault/OpenBao-held keys.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

import structlog

log = structlog.get_logger(__name__)

_MASTER = "dev-master.key"


def load_or_create_master(key_dir: Path) -> bytes:
    """Read the 32-byte master key, creating it (mode 0600, directory 0700) on first use."""
    key_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = key_dir / _MASTER
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(32))
        log.warning("dev_key_created", path=str(path), note="development key file; never use in production")
    data = path.read_bytes()
    if len(data) != 32:
        raise ValueError(f"{path} is not a 32-byte key file")
    return data


class DevSubjectHasher:
    """``SubjectHasher`` with per-tenant keys derived from the dev master key (HMAC-SHA256)."""

    def __init__(self, master: bytes) -> None:
        self._master = master
        self._hash_keys: dict[str, bytes] = {}
        self._token_keys: dict[str, bytes] = {}

    def _derive(self, purpose: str, tenant: str) -> bytes:
        return hmac.new(self._master, f"{purpose}\x1f{tenant}".encode(), hashlib.sha256).digest()

    def subject_hash(self, tenant: str, subject_id: str) -> str:
        key = self._hash_keys.get(tenant)
        if key is None:
            key = self._hash_keys.setdefault(tenant, self._derive("subject", tenant))
        return hmac.new(key, subject_id.encode(), hashlib.sha256).hexdigest()[:32]

    def token_key(self, tenant: str) -> bytes:
        key = self._token_keys.get(tenant)
        if key is None:
            key = self._token_keys.setdefault(tenant, self._derive("token", tenant))
        return key

    def api_key_pepper(self) -> bytes:
        return self._derive("apikey", "*")
