"""Key rotation: a new version of a tenant's key-encryption key, then every stored data key rewrapped
under it, then (optionally) the older versions retired. Record ciphertexts are never touched: they are
sealed under data keys, and only the data keys' wrapping depends on the tenant key's version."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from carnet.crypto.keyring import Keyring
from carnet.ports import ErasureEntry, ErasureLedger, Kms


@dataclass(frozen=True, slots=True)
class RewrapResult:
    tenant: str
    version: int
    rewrapped: int
    skipped: int
    retired_below: int | None

    def as_dict(self) -> dict[str, object]:
        return {"tenant": self.tenant, "version": self.version, "rewrapped": self.rewrapped,
                "skipped": self.skipped, "retired_below": self.retired_below}


def rotate(kms: Kms, *, tenant: str) -> int:
    kms.ensure_tenant_key(tenant)
    return kms.rotate(tenant)


def rewrap(kms: Kms, keyring: Keyring, *, tenant: str, retire: bool) -> RewrapResult:
    """Rewrap every data key of the tenant to the newest version. With ``retire`` and nothing skipped,
    older versions then stop decrypting (a key erased during the pass is skipped, never rewritten)."""
    version = kms.latest_version(tenant)
    report = keyring.rewrap_all(tenant)
    retired = None
    if retire and report.skipped == 0:
        kms.set_min_decryption_version(tenant, version)
        retired = version
    return RewrapResult(tenant, version, report.rewrapped, report.skipped, retired)


@dataclass(frozen=True, slots=True)
class TenantShredReceipt:
    tenant: str
    kms_key_destroyed: bool
    data_keys_deleted: int

    def as_dict(self) -> dict[str, object]:
        return {"tenant": self.tenant, "kms_key_destroyed": self.kms_key_destroyed,
                "data_keys_deleted": self.data_keys_deleted}


def shred_tenant(kms: Kms, keyring: Keyring, *, tenant: str, ledger: ErasureLedger) -> TenantShredReceipt:
    """Panic purge: the tenant's key-encryption key is destroyed in the KMS first (from then on no
    data key of the tenant can be unwrapped anywhere, backups of the key store included), then the
    wrapped data keys and the tenant hash key are deleted and evicted from this process. The erasure
    ledger records it first, so that restoring an older backup deletes the tenant's records again.

    The keyring tells the other processes (``KeyInvalidations``): with the PostgreSQL control plane
    they drop the tenant's cached keys within 2 seconds; if that message is lost they keep them for
    at most the keyring's TTL (5 minutes) (docs/operations.md, "Key cache across processes")."""
    ledger.append(ErasureEntry(tenant, None, None, datetime.now(UTC)))
    destroyed = kms.destroy_tenant_key(tenant)
    deleted = keyring.shred_tenant(tenant)
    return TenantShredReceipt(tenant, destroyed, deleted)
