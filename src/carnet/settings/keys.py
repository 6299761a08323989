"""Where data keys come from and are kept: the KMS (dev key file, Vault/OpenBao Transit, PKCS#11 HSM) and
the key store of wrapped keys (``CARNET_KMS``, ``CARNET_VAULT__*``, ``CARNET_PKCS11__*``, ``CARNET_KEYSTORE*``)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Self

from pydantic import BaseModel, Field, SecretStr, model_validator

from carnet.settings.tls import cert_pair


class KmsBackend(StrEnum):
    DEV = "dev"  # a local key file: development only, refused in production
    VAULT = "vault"  # Vault or OpenBao Transit through hvac
    PKCS11 = "pkcs11"  # an HSM through its PKCS#11 library (keys generated and kept inside the token)


class KeyStoreBackend(StrEnum):
    FILE = "file"  # a directory beside (never inside) the data dir: the embedded default
    VAULT = "vault"  # Vault/OpenBao KV v2, reached with the CARNET_VAULT__* connection settings


class VaultAuth(StrEnum):
    TOKEN = "token"
    APPROLE = "approle"
    KUBERNETES = "kubernetes"


class VaultSettings(BaseModel):
    url: str = "https://localhost:8200"
    auth: VaultAuth = VaultAuth.KUBERNETES
    token: SecretStr | None = None
    role_id: str | None = None
    secret_id: SecretStr | None = None
    kubernetes_role: str = "carnet"
    ca_cert: Path | None = None
    client_cert: Path | None = None  # mutual TLS (Vault's cert listener or auth method), with its key below
    client_key: Path | None = None
    mount: str = "transit"
    key_template: str = "carnet-{tenant}"
    namespace: str | None = None
    # Per-call timeout: a hung KMS must turn into a 503, not a hung request.
    timeout: float = Field(5.0, gt=0, le=60)

    @model_validator(mode="after")
    def _key_with_cert(self) -> Self:
        cert_pair(self.client_cert, self.client_key, "CARNET_VAULT__")
        return self


class KeyStoreVaultSettings(BaseModel):
    """Where the KV v2 key store keeps wrapped data keys: ``{mount}/data/{prefix}/{tenant}/{subject}``."""

    mount: str = "secret"
    prefix: str = Field("carnet/data-keys", min_length=1)


class Pkcs11Settings(BaseModel):
    library: Path = Path("/usr/lib/softhsm/libsofthsm2.so")
    token_label: str = "carnet"
    user_pin: SecretStr | None = None
    key_template: str = "carnet-{tenant}-v{version}"
