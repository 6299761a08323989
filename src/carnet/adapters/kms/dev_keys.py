"""Development key material: a local random key file (0600) in the key directory.

Only the API-key pepper of a development setup comes from it, so the embedded default runs with no
secret to set. Production settings refuse to start without ``CARNET_API_KEY_PEPPER``.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

import structlog

from carnet.private_fs import private_dir

log = structlog.get_logger(__name__)

_MASTER = "dev-master.key"


def load_or_create_master(key_dir: Path) -> bytes:
    """Read the 32-byte key, creating it (mode 0600, directory 0700) on first use."""
    private_dir(key_dir)
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


def dev_api_key_pepper(key_dir: Path) -> bytes:
    return hmac.new(load_or_create_master(key_dir), b"carnet/entrypoints/http-key-pepper/v1", hashlib.sha256).digest()
