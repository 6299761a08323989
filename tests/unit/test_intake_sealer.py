"""Staging an extraction reseals the intake under the key that sealed it, and never creates a key: a
worker extracting outside the subject's lock must not give an erased subject a key again."""

from __future__ import annotations

import pytest

from carnet.crypto.errors import KeyDestroyed
from carnet.crypto.intake_sealer import IntakeSealer
from carnet.crypto.keyring import Keyring
from carnet.domain.intake import Message, Payload
from carnet.domain.records import Scope
from tests.unit.test_keyring import FakeClock, FakeKms, MemoryKeyStore

SCOPE = Scope("t1", "a" * 32)


def test_reseal_uses_the_queued_intakes_key_and_never_creates_one() -> None:
    kms, store = FakeKms(), MemoryKeyStore()
    kms.ensure_tenant_key("t1")
    ring = Keyring(kms, store, clock=FakeClock())
    sealer = IntakeSealer(ring)
    payload = Payload("MBR-1", (Message("user", "Bonjour."),))
    queued = sealer.seal(SCOPE, "intake-1", payload)
    assert sealer.open(SCOPE, "intake-1", sealer.reseal(SCOPE, "intake-1", payload, like=queued)) == payload
    ring.shred(SCOPE.tenant, SCOPE.subject)  # erased while the worker was extracting
    with pytest.raises(KeyDestroyed):
        sealer.reseal(SCOPE, "intake-1", payload, like=queued)
    assert store.get(SCOPE.tenant, SCOPE.subject) is None  # no key made for the erased subject
