"""Key rotation: a new version of a tenant's key-encryption key, then every stored data key rewrapped
under it, then (optionally) the older versions retired. Record ciphertexts are never touched: they are
sealed under data keys, and only the data keys' wrapping depends on the tenant key's version."""

from __future__ import annotations

from dataclasses import dataclass

from carnet.crypto.keyring import Keyring
from carnet.ports import Kms


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
