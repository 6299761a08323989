"""Subject ids kept sealed in the subject registry, so that hashes can be recomputed.

A subject id is personal data and is stored nowhere in clear; everything is keyed by its HMAC. To
re-hash a tenant under a new hash key (``carnet keys rehash``), each id must be read back: the
registry keeps it sealed under the subject's own data key, bound to (tenant, subject hash,
``~subject``, ``subject_id``). Erasing the subject (its data key destroyed) makes that copy, and
any copy in a backup of the catalog, unreadable like the subject's records. The subject's other
values kept in the catalog (a legal hold's case reference) are sealed the same way, each bound to
its own name (``seal_value``).
"""

from __future__ import annotations

from carnet.crypto.envelope import Aad, header_key_id, open_text, seal
from carnet.crypto.keyring import Keyring
from carnet.domain.records import Scope

_RECORD = "~subject"
_FIELD = "subject_id"


class KeyringSubjectIdSealer:
    def __init__(self, keyring: Keyring) -> None:
        self._keyring = keyring

    def seal_id(self, scope: Scope, subject_id: str) -> bytes:
        dk = self._keyring.data_key(scope.tenant, scope.subject)
        return seal(dk.key, key_id=dk.key_id, aad=_aad(scope), plaintext=subject_id)

    def open_id(self, scope: Scope, sealed: bytes) -> str:
        key = self._keyring.read_key(scope.tenant, scope.subject, header_key_id(sealed))
        return open_text(key, aad=_aad(scope), blob=sealed)


    def seal_value(self, scope: Scope, name: str, value: str) -> bytes:
        dk = self._keyring.data_key(scope.tenant, scope.subject)
        return seal(dk.key, key_id=dk.key_id, aad=_aad(scope, name), plaintext=value)

    def open_value(self, scope: Scope, name: str, sealed: bytes) -> str:
        key = self._keyring.read_key(scope.tenant, scope.subject, header_key_id(sealed))
        return open_text(key, aad=_aad(scope, name), blob=sealed)


def _aad(scope: Scope, name: str = _FIELD) -> Aad:
    return Aad(scope.tenant, scope.subject, _RECORD, name)
