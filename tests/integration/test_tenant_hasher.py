"""Subject hashes under a per-tenant key that comes from the KMS (dev KMS and file key store here)."""

from __future__ import annotations

from pathlib import Path

from carnet.adapters.keystores.files import FileKeyStore
from carnet.adapters.kms.dev import DevKms
from carnet.crypto.keyring import Keyring
from carnet.crypto.tenant_hasher import TENANT_ENTRY, KmsSubjectHasher


def _hasher(root: Path) -> tuple[KmsSubjectHasher, Keyring]:
    kms = DevKms(root / "kms")
    keyring = Keyring(kms, FileKeyStore(root / "subjects"))
    return KmsSubjectHasher(keyring, kms), keyring


def test_hashes_are_stable_per_tenant_and_differ_across_tenants(tmp_path: Path) -> None:
    h, _ = _hasher(tmp_path)
    a = h.subject_hash("assur-nord", "ADH-0042")
    assert a == h.subject_hash("assur-nord", "ADH-0042") and len(a) == 32
    assert a != h.subject_hash("banque-sud", "ADH-0042")
    assert "ADH-0042" not in a
    # a new process (new keyring, same KMS and key store) computes the same hash
    again, _ = _hasher(tmp_path)
    assert again.subject_hash("assur-nord", "ADH-0042") == a


def test_token_key_is_per_tenant_and_separate_from_the_subject_key(tmp_path: Path) -> None:
    h, _ = _hasher(tmp_path)
    assert len(h.token_key("t1")) == 32
    assert h.token_key("t1") != h.token_key("t2")


def test_shredding_the_tenant_key_unlinks_every_hash(tmp_path: Path) -> None:
    h, keyring = _hasher(tmp_path)
    before = h.subject_hash("t1", "ADH-1")
    assert keyring.shred("t1", TENANT_ENTRY)
    assert h.subject_hash("t1", "ADH-1") != before
