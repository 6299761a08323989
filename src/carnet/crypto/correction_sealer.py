"""People's corrections (``domain.corrections``) sealed under the subject's data key.

AES-256-GCM (``envelope``), associated data (tenant, ``~corrections``, correction id, ``pair``). The
subject hash is left out of the associated data on purpose: a rehash (``carnet keys rehash``) moves
the rows to the subject's new hash and stores the same data key under it, so a correction opens
after the move without being resealed. It still opens only with that subject's key (the blob names
the key by its random id, read from the subject's own entry), and erasing the subject destroys the
key and deletes the rows.
"""

from __future__ import annotations

import json

from carnet.crypto.envelope import Aad, header_key_id, open_text, seal
from carnet.crypto.keyring import Keyring
from carnet.domain.corrections import CorrectionPair
from carnet.domain.records import Scope

_RECORD = "~corrections"
_FIELD = "pair"


class CorrectionSealer:
    def __init__(self, keyring: Keyring) -> None:
        self._keyring = keyring

    def seal(self, scope: Scope, pair: CorrectionPair) -> bytes:
        """Under the subject's current data key; the caller holds the subject's lock (as for a record)."""
        dk = self._keyring.data_key(scope.tenant, scope.subject)
        return seal(dk.key, key_id=dk.key_id, aad=_aad(scope.tenant, pair.id),
                    plaintext=json.dumps(pair.as_json(), ensure_ascii=False, sort_keys=True))

    def open(self, scope: Scope, correction_id: str, sealed: bytes) -> CorrectionPair:
        """``KeyDestroyed`` when the subject's key is gone, ``EnvelopeError`` when the blob was altered."""
        key = self._keyring.read_key(scope.tenant, scope.subject, header_key_id(sealed))
        return CorrectionPair.from_json(json.loads(open_text(key, aad=_aad(scope.tenant, correction_id),
                                                             blob=sealed)))


def _aad(tenant: str, correction_id: str) -> Aad:
    return Aad(tenant, _RECORD, correction_id, _FIELD)
