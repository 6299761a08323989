"""Keys, chosen from settings: the KMS (dev file, Vault/OpenBao Transit, PKCS#11), the key store, the keyring
that caches data keys, the sealing of records, and cross-process key invalidations."""

from __future__ import annotations

from pathlib import Path

from carnet.adapters.vault.auth import Auth
from carnet.bootstrap.stores import postgres_conninfo
from carnet.crypto.keyring import Keyring
from carnet.ports import (
    KeyInvalidations,
    KeyStore,
    Kms,
    RecordStore,
    VectorIndex,
)
from carnet.settings.root import (
    CatalogBackend,
    KeyStoreBackend,
    KmsBackend,
    Settings,
    VaultAuth,
)


def build_kms(settings: Settings) -> Kms:
    if settings.kms_backend is KmsBackend.DEV:
        from carnet.adapters.kms.dev import DevKms

        return DevKms(settings.resolved_key_dir / "kms", data_dir=settings.data_dir)
    if settings.kms_backend is KmsBackend.PKCS11:
        from carnet.adapters.kms.hsm import Pkcs11Kms

        p = settings.pkcs11
        if p.user_pin is None:
            raise ValueError("CARNET_PKCS11__USER_PIN is required with CARNET_KMS_BACKEND=pkcs11")
        return Pkcs11Kms(str(p.library), token_label=p.token_label, user_pin=p.user_pin.get_secret_value(),
                         key_template=p.key_template)
    from carnet.adapters.kms.vault_transit import connect

    v = settings.vault
    return connect(v.url, auth=_vault_auth(settings), ca_cert=v.ca_cert, client_cert=_vault_client_cert(settings),
                   mount=v.mount, key_template=v.key_template, namespace=v.namespace, timeout=v.timeout)


def _vault_client_cert(settings: Settings) -> tuple[Path, Path] | None:
    v = settings.vault
    return (v.client_cert, v.client_key) if v.client_cert is not None and v.client_key is not None else None


def _vault_auth(settings: Settings) -> Auth:
    from carnet.adapters.vault.auth import AppRoleAuth, KubernetesAuth, TokenAuth

    v = settings.vault
    if v.auth is VaultAuth.TOKEN:
        if v.token is None:
            raise ValueError("CARNET_VAULT__TOKEN is required with CARNET_VAULT__AUTH=token")
        return TokenAuth(v.token.get_secret_value())
    if v.auth is VaultAuth.APPROLE:
        if v.role_id is None or v.secret_id is None:
            raise ValueError("CARNET_VAULT__ROLE_ID and CARNET_VAULT__SECRET_ID are required for AppRole")
        return AppRoleAuth(v.role_id, v.secret_id.get_secret_value())
    return KubernetesAuth(v.kubernetes_role)


def build_sealed_index(settings: Settings, inner: VectorIndex, kms: Kms | None = None, *,
                       invalidations: KeyInvalidations | None = None) -> tuple[RecordStore, Keyring, Kms]:
    """Every record's text is sealed under its subject's data key before it reaches the store; the
    wrapped data keys live in the key store beside (never inside) the data dir."""
    from carnet.crypto.sealed_index import SealedIndex

    kms = kms or build_kms(settings)
    keyring = build_keyring(settings, kms, invalidations)
    return SealedIndex(inner, keyring, kms), keyring, kms


def build_keyring(settings: Settings, kms: Kms, invalidations: KeyInvalidations | None = None) -> Keyring:
    """``invalidations``: where its shreds are told to the other processes (``build_key_invalidations``);
    without, only this process forgets the keys it destroys (an admin command on the embedded store)."""
    return Keyring(kms, build_key_store(settings, kms), invalidations=invalidations)


def build_key_invalidations(settings: Settings) -> KeyInvalidations:
    """PostgreSQL ``NOTIFY``/``LISTEN`` on channel ``carnet_keys`` when the control plane is PostgreSQL
    (several processes cache keys), else nothing to tell (one process). The listener starts only when
    ``subscribe`` is called (``build`` does; a one-shot command only publishes)."""
    if settings.catalog is not CatalogBackend.POSTGRES:
        from carnet.adapters.local.invalidations import InProcessInvalidations

        return InProcessInvalidations()
    from carnet.adapters.postgres.key_invalidations import PostgresKeyInvalidations, listener_conninfo
    from carnet.adapters.postgres.pool import open_pool

    pg = settings.postgres
    pool = open_pool(postgres_conninfo(settings, "keys"), size=2, timeout=pg.connect_timeout,
                     migrate=pg.auto_migrate, name="keys")
    return PostgresKeyInvalidations(pool, listener_conninfo(postgres_conninfo(settings, "keys-listen")),
                                    backoff_max=pg.listener_backoff_max)


def build_key_store(settings: Settings, kms: Kms) -> KeyStore:
    """The file store beside the data dir, or Vault KV v2 (sharing the Transit KMS's session and
    login when the KMS is Vault too)."""
    if settings.key_store is KeyStoreBackend.FILE:
        from carnet.adapters.keystores.files import FileKeyStore

        return FileKeyStore(settings.resolved_key_dir / "subjects", data_dir=settings.data_dir)
    from carnet.adapters.keystores.vault_kv import VaultKvKeyStore
    from carnet.adapters.kms.vault_transit import VaultTransitKms
    from carnet.adapters.vault.session import open_session

    v = settings.key_store_vault
    session = kms.session if isinstance(kms, VaultTransitKms) else open_session(
        settings.vault.url, auth=_vault_auth(settings), ca_cert=settings.vault.ca_cert,
        client_cert=_vault_client_cert(settings), timeout=settings.vault.timeout, namespace=settings.vault.namespace)
    return VaultKvKeyStore(session, mount=v.mount, prefix=v.prefix)
