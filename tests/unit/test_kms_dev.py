"""The dev KMS: a local key file holding versioned per-tenant AES-256 keys."""

from __future__ import annotations

import base64
import stat
from dataclasses import replace
from pathlib import Path

import pytest

from carnet.adapters.kms.dev import KEY_FILE, DevKms, KmsRejected, UnwrapFailed, kek_version
from carnet.errors import InvalidInput


@pytest.fixture
def kms(tmp_path: Path) -> DevKms:
    kms = DevKms(tmp_path / "keys", data_dir=tmp_path / "data")
    kms.ensure_tenant_key("acme")
    return kms


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_key_file_and_directory_are_private(tmp_path: Path, kms: DevKms) -> None:
    assert _mode(tmp_path / "keys") == 0o700
    assert _mode(tmp_path / "keys" / KEY_FILE) == 0o600
    kms.rotate("acme")  # rewritten atomically: still private
    assert _mode(tmp_path / "keys" / KEY_FILE) == 0o600
    assert [p.name for p in (tmp_path / "keys").iterdir() if p.name.endswith(".tmp")] == []


def test_warns_loudly_on_construction(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    DevKms(tmp_path / "keys")
    assert "never use in production" in capsys.readouterr().err


def test_refuses_a_key_dir_inside_the_data_dir(tmp_path: Path) -> None:
    with pytest.raises(KmsRejected):
        DevKms(tmp_path / "data", data_dir=tmp_path / "data")
    with pytest.raises(KmsRejected):
        DevKms(tmp_path / "data" / "keys", data_dir=tmp_path / "data")


def test_refuses_a_key_file_readable_by_others(tmp_path: Path, kms: DevKms) -> None:
    (tmp_path / "keys" / KEY_FILE).chmod(0o644)
    with pytest.raises(KmsRejected, match="chmod"):
        DevKms(tmp_path / "keys").check()


def test_round_trip(kms: DevKms) -> None:
    plaintext, wrapped = kms.generate_data_key("acme")
    assert len(plaintext) == 32
    assert wrapped.tenant == "acme"
    assert wrapped.kek_version == kek_version(wrapped.ciphertext) == 1
    assert wrapped.ciphertext.startswith("dev:v1:")
    assert base64.b64decode(wrapped.ciphertext.removeprefix("dev:v1:")).find(plaintext) == -1
    assert kms.unwrap(wrapped) == plaintext
    assert kms.generate_data_key("acme")[0] != plaintext


def test_ensure_is_idempotent_and_keys_persist(tmp_path: Path, kms: DevKms) -> None:
    plaintext, wrapped = kms.generate_data_key("acme")
    kms.ensure_tenant_key("acme")
    assert kms.unwrap(wrapped) == plaintext
    assert DevKms(tmp_path / "keys").unwrap(wrapped) == plaintext  # another process, same file


def test_unknown_tenant_is_refused(kms: DevKms) -> None:
    with pytest.raises(KmsRejected):
        kms.generate_data_key("nobody")
    with pytest.raises(KmsRejected):
        kms.rotate("nobody")
    with pytest.raises(InvalidInput):
        kms.ensure_tenant_key("../etc")


def test_tenant_isolation(kms: DevKms) -> None:
    kms.ensure_tenant_key("globex")
    _, wrapped = kms.generate_data_key("acme")
    with pytest.raises(UnwrapFailed):
        kms.unwrap(replace(wrapped, tenant="globex"))


@pytest.mark.parametrize("position", [7, 20, -1])
def test_tampered_wrapped_key_fails(kms: DevKms, position: int) -> None:
    _, wrapped = kms.generate_data_key("acme")
    raw = bytearray(base64.b64decode(wrapped.ciphertext.removeprefix("dev:v1:")))
    raw[position] ^= 0x01
    tampered = replace(wrapped, ciphertext="dev:v1:" + base64.b64encode(bytes(raw)).decode())
    with pytest.raises(UnwrapFailed):
        kms.unwrap(tampered)


def test_malformed_wrapped_keys_fail(kms: DevKms) -> None:
    _, wrapped = kms.generate_data_key("acme")
    for bad in (
        replace(wrapped, kek_version=2),
        replace(wrapped, ciphertext="vault:v1:AAAA"),
        replace(wrapped, ciphertext="dev:v1:!!"),
    ):
        with pytest.raises(UnwrapFailed):
            kms.unwrap(bad)


def test_version_is_bound(kms: DevKms) -> None:
    """A wrapped key relabelled with another version does not open under that version's key."""
    _, wrapped = kms.generate_data_key("acme")
    kms.rotate("acme")
    relabelled = replace(wrapped, ciphertext=wrapped.ciphertext.replace("dev:v1:", "dev:v2:", 1), kek_version=2)
    with pytest.raises(UnwrapFailed):
        kms.unwrap(relabelled)


def test_rotate_rewrap_and_retire(tmp_path: Path, kms: DevKms) -> None:
    old_plain, old = kms.generate_data_key("acme")
    assert kms.rotate("acme") == 2
    new_plain, new = kms.generate_data_key("acme")
    assert new.kek_version == 2
    assert kms.unwrap(old) == old_plain  # old versions still open after rotation

    rewrapped = kms.rewrap([old, new])
    assert [w.kek_version for w in rewrapped] == [2, 2]
    assert rewrapped[1] == new  # already current: left alone
    assert [kms.unwrap(w) for w in rewrapped] == [old_plain, new_plain]

    kms.set_min_decryption_version("acme", 2)
    with pytest.raises(UnwrapFailed, match="retired"):
        kms.unwrap(old)
    with pytest.raises(UnwrapFailed, match="retired"):
        DevKms(tmp_path / "keys").unwrap(old)
    with pytest.raises(InvalidInput):
        kms.set_min_decryption_version("acme", 3)


def test_another_process_rotation_is_seen(tmp_path: Path, kms: DevKms) -> None:
    """``carnet keys rotate`` in another process: the service picks the new version up."""
    other = DevKms(tmp_path / "keys")
    assert other.rotate("acme") == 2
    assert kms.generate_data_key("acme")[1].kek_version == 2
    kms.ensure_tenant_key("globex")  # a write from the first process keeps the other's rotation
    assert other.latest_version("acme") == 2
    assert kms.rotate("acme") == 3


def test_corrupt_key_file_is_refused(tmp_path: Path, kms: DevKms) -> None:
    (tmp_path / "keys" / KEY_FILE).write_text('{"format": 1, "tenants": {"acme": {"versions": {"1": "short"}}}}')
    with pytest.raises(KmsRejected, match="unreadable"):
        kms.check()


def test_a_corrupt_key_file_is_refused_without_its_path(tmp_path: Path, kms: DevKms) -> None:
    (tmp_path / "keys" / KEY_FILE).write_text('{"format": 1, "tenants": {"acme": {"versions": {"1": "secretish"}}}}')
    with pytest.raises(KmsRejected) as refused:
        kms.check()
    assert str(tmp_path) not in refused.value.message and "secretish" not in refused.value.message
    assert refused.value.__cause__ is None
