"""Errors of the crypto layer, under ``carnet.errors.CarnetError``.

    CarnetError
    └── CryptoError               (500 crypto_error)
        ├── EnvelopeError         (500 envelope_invalid)   a blob does not open: tampered, moved, wrong key or format
        ├── KeyDestroyed          (410 key_destroyed)      the data key a blob names is not in the key store
        └── KeyStoreCorrupt       (500 key_store_corrupt)  a key-store entry cannot be read back

Messages never carry plaintext, key material or a subject id (the subject *hash* may go in ``context``).
"""

from __future__ import annotations

from carnet.errors import CarnetError


class CryptoError(CarnetError):
    code = "crypto_error"
    status = 500


class EnvelopeError(CryptoError):
    """Authentication failed or the blob is malformed. Deliberately one error for all causes: an
    attacker learns nothing from which check failed, and a caller cannot act differently anyway."""

    code = "envelope_invalid"

    def __init__(self, reason: str) -> None:
        super().__init__(f"encrypted field does not open: {reason}")


class KeyDestroyed(CryptoError):
    """The key store has no data key with this id for the subject: it was shredded (erasure), or
    replaced by a new key after an erasure. Without tombstones the two are indistinguishable from
    "never existed", on purpose: the store keeps nothing about an erased subject."""

    code = "key_destroyed"
    status = 410

    def __init__(self, tenant: str, subject: str, key_id: str) -> None:
        super().__init__("data key destroyed or unknown", tenant=tenant, subject=subject, key_id=key_id)


class KeyStoreCorrupt(CryptoError):
    code = "key_store_corrupt"

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"key store entry unreadable: {reason}", where=where)
