"""``VaultKvKeyStore`` against a real OpenBao dev server (KV v2 at ``secret/``), with the same
contract as the file store, plus what only Vault can show: versions destroyed, least privilege."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import hvac.exceptions
import pytest

from carnet.adapters.keystores.vault_kv import VaultKvKeyStore
from carnet.adapters.kms.vault_transit import VaultTransitKms, connect
from carnet.adapters.vault.auth import AppRoleAuth, TokenAuth, key_store_policy, transit_policy
from carnet.adapters.vault.session import VaultSession, open_session
from carnet.crypto.keyring import Keyring
from carnet.errors import KmsDenied
from carnet.ports import StoredKey, WrappedKey
from tests.support.openbao import Bao, transit_server

PREFIX = "carnet/data-keys"


@pytest.fixture(scope="module")
def bao(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bao]:
    with transit_server(tmp_path_factory.mktemp("bao-kv")) as server:
        yield server


@pytest.fixture(scope="module")
def session(bao: Bao) -> VaultSession:
    return open_session(bao.url, auth=TokenAuth(bao.root_token), ca_cert=bao.ca_cert, timeout=5)


@pytest.fixture
def store(session: VaultSession) -> VaultKvKeyStore:
    return VaultKvKeyStore(session, prefix=PREFIX)


@pytest.fixture
def tenant() -> str:
    return f"t{uuid.uuid4().hex[:12]}"


def _key(tenant: str, subject: str = "3f2a9c", *, version: int = 1, key_id: str = "kid1") -> StoredKey:
    return StoredKey(subject, key_id, WrappedKey(tenant, f"vault:v{version}:c2VjcmV0LXdyYXBwZWQ=", version))


def _versions(bao: Bao, tenant: str, subject: str) -> list[str]:
    meta = bao.root().secrets.kv.v2.read_secret_metadata(f"{PREFIX}/{tenant}/{subject}")
    return sorted(meta["data"]["versions"])


def test_round_trip_and_first_writer_wins(store: VaultKvKeyStore, tenant: str) -> None:
    assert store.get(tenant, "3f2a9c") is None
    first = _key(tenant, key_id="first")
    assert store.put_if_absent(first) == first
    assert store.put_if_absent(_key(tenant, key_id="second")) == first
    assert store.get(tenant, "3f2a9c") == first


def test_replace_is_compare_and_swap_and_keeps_one_version(bao: Bao, store: VaultKvKeyStore, tenant: str) -> None:
    old, new = _key(tenant, version=1), _key(tenant, version=2)
    store.put_if_absent(old)
    assert store.replace(old, new) is True
    assert store.get(tenant, "3f2a9c") == new
    assert _versions(bao, tenant, "3f2a9c") == ["2"]  # the wrapped copy under the old KEK is gone
    assert store.replace(old, _key(tenant, version=3)) is False  # stale view: refused
    assert store.delete(tenant, "3f2a9c") is True
    assert store.replace(new, _key(tenant, version=3)) is False  # erased meanwhile: not resurrected
    assert store.get(tenant, "3f2a9c") is None
    with pytest.raises(ValueError):
        store.replace(old, _key(tenant, key_id="other"))


def test_delete_destroys_every_version_and_the_metadata(bao: Bao, store: VaultKvKeyStore, tenant: str) -> None:
    store.put_if_absent(_key(tenant))
    assert store.delete(tenant, "3f2a9c") is True
    with pytest.raises(hvac.exceptions.InvalidPath):  # not a soft delete: nothing left to undelete
        bao.root().secrets.kv.v2.read_secret_metadata(f"{PREFIX}/{tenant}/3f2a9c")
    assert store.delete(tenant, "3f2a9c") is False


def test_scan_lists_one_tenant_and_odd_names_round_trip(store: VaultKvKeyStore, tenant: str) -> None:
    other = tenant + "x"
    for subject in ("a1", "~tenant-hash-key", "b/2"):
        store.put_if_absent(_key(tenant, subject))
    store.put_if_absent(_key(other, "zz"))
    assert sorted(k.subject for k in store.scan(tenant)) == ["a1", "b/2", "~tenant-hash-key"]
    assert [k.subject for k in store.scan(tenant + "-none")] == []
    with pytest.raises(ValueError):
        store.get(tenant, "..")


def test_keyring_on_transit_and_kv_with_least_privilege(bao: Bao, tenant: str) -> None:
    """The runtime AppRole (Transit runtime policy + key-store policy) creates, opens and shreds data
    keys; the admin rewraps them in the same store; a token without the key-store policy is denied
    by Vault (403)."""
    root = bao.root()
    if "approle/" not in root.sys.list_auth_methods()["data"]:
        root.sys.enable_auth_method("approle")
    root.sys.create_or_update_policy("carnet-rt", transit_policy() + key_store_policy(prefix=PREFIX))
    root.sys.create_or_update_policy("carnet-transit-only", transit_policy())
    creds = {}
    for role in ("carnet-rt", "carnet-transit-only"):
        root.auth.approle.create_or_update_approle(role, token_policies=[role], token_ttl="10m",
                                                   token_no_default_policy=True)
        creds[role] = AppRoleAuth(root.auth.approle.read_role_id(role)["data"]["role_id"],
                                  root.auth.approle.generate_secret_id(role)["data"]["secret_id"])
    admin = connect(bao.url, auth=TokenAuth(bao.root_token), ca_cert=bao.ca_cert, timeout=5)
    admin.ensure_tenant_key(tenant)  # creating tenant keys is the admin's job

    session = open_session(bao.url, auth=creds["carnet-rt"], ca_cert=bao.ca_cert, timeout=5)
    kms = VaultTransitKms(session)
    store = VaultKvKeyStore(session, prefix=PREFIX)
    keyring = Keyring(kms, store)
    dk = keyring.data_key(tenant, "s1")
    keyring.forget(tenant, "s1")
    assert keyring.read_key(tenant, "s1", dk.key_id) == dk.key  # unwrapped again from the stored entry

    admin.rotate(tenant)
    report = Keyring(admin, VaultKvKeyStore(admin.session, prefix=PREFIX)).rewrap_all(tenant)
    assert report.rewrapped == 1
    stored = store.get(tenant, "s1")
    assert stored is not None and stored.wrapped.kek_version == 2
    keyring.forget(tenant, "s1")
    assert keyring.read_key(tenant, "s1", dk.key_id) == dk.key
    assert keyring.shred(tenant, "s1") is True
    assert not keyring.exists(tenant, "s1")

    bare = open_session(bao.url, auth=creds["carnet-transit-only"], ca_cert=bao.ca_cert, timeout=5)
    with pytest.raises(KmsDenied):
        VaultKvKeyStore(bare, prefix=PREFIX).put_if_absent(_key(tenant, "s2"))
