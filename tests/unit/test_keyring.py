"""The keyring against an in-memory KMS and key store that implement the ports: creation, cache
bounds (LRU size, TTL on an injected clock, use cap), shredding and rewrapping."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence

import pytest

from carnet.adapters.keystores.files import KeyStore, StoredKey
from carnet.crypto.envelope import Aad, header_key_id, open_, seal
from carnet.crypto.errors import CryptoError, KeyDestroyed
from carnet.crypto.keyring import Keyring
from carnet.ports import Kms, WrappedKey


class FakeKms:
    """Versioned tenant keys; "wrapping" is a lookup table, which is all the keyring may assume."""

    def __init__(self) -> None:
        self.versions: dict[str, int] = {}
        self._keys: dict[str, bytes] = {}
        self.calls: list[str] = []

    def ensure_tenant_key(self, tenant: str) -> None:
        self.versions.setdefault(tenant, 1)

    def generate_data_key(self, tenant: str) -> tuple[bytes, WrappedKey]:
        self.calls.append("generate")
        key = os.urandom(32)
        return key, self._wrap(tenant, key)

    def unwrap(self, wrapped: WrappedKey) -> bytes:
        self.calls.append("unwrap")
        return self._keys[wrapped.ciphertext]

    def rotate(self, tenant: str) -> int:
        self.versions[tenant] += 1
        return self.versions[tenant]

    def rewrap(self, wrapped: Sequence[WrappedKey]) -> list[WrappedKey]:
        self.calls.append(f"rewrap:{len(wrapped)}")
        return [self._wrap(w.tenant, self._keys[w.ciphertext]) for w in wrapped]

    def check(self) -> None:
        pass

    def _wrap(self, tenant: str, key: bytes) -> WrappedKey:
        version = self.versions[tenant]
        ciphertext = f"fake:v{version}:{os.urandom(8).hex()}"
        self._keys[ciphertext] = key
        return WrappedKey(tenant=tenant, ciphertext=ciphertext, kek_version=version)


class MemoryKeyStore:
    def __init__(self) -> None:
        self.entries: dict[tuple[str, str], StoredKey] = {}

    def get(self, tenant: str, subject: str) -> StoredKey | None:
        return self.entries.get((tenant, subject))

    def put_if_absent(self, key: StoredKey) -> StoredKey:
        return self.entries.setdefault((key.tenant, key.subject), key)

    def replace(self, old: StoredKey, new: StoredKey) -> bool:
        if self.entries.get((old.tenant, old.subject)) != old:
            return False
        self.entries[(new.tenant, new.subject)] = new
        return True

    def delete(self, tenant: str, subject: str) -> bool:
        return self.entries.pop((tenant, subject), None) is not None

    def scan(self, tenant: str) -> Iterator[StoredKey]:
        yield from [k for (t, _), k in sorted(self.entries.items()) if t == tenant]


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def kms() -> FakeKms:
    k = FakeKms()
    k.ensure_tenant_key("t1")
    k.ensure_tenant_key("t2")
    return k


@pytest.fixture
def store() -> MemoryKeyStore:
    return MemoryKeyStore()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def _ring(kms: FakeKms, store: MemoryKeyStore, clock: FakeClock, **kw: int) -> Keyring:
    k: Kms = kms  # the fakes implement the ports
    s: KeyStore = store
    return Keyring(k, s, clock=clock, **kw)


def test_first_write_creates_and_stores_wrapped(kms: FakeKms, store: MemoryKeyStore, clock: FakeClock) -> None:
    ring = _ring(kms, store, clock)
    dk = ring.data_key("t1", "s1")
    assert len(dk.key) == 32
    stored = store.get("t1", "s1")
    assert stored is not None and stored.key_id == dk.key_id and stored.wrapped.kek_version == 1
    assert ring.data_key("t1", "s1") == dk
    assert ring.read_key("t1", "s1", dk.key_id) == dk.key
    assert kms.calls == ["generate"]  # warm cache: no KMS round trip


def test_subjects_and_tenants_get_distinct_keys(kms: FakeKms, store: MemoryKeyStore, clock: FakeClock) -> None:
    ring = _ring(kms, store, clock)
    keys = {ring.data_key(t, s).key for t in ("t1", "t2") for s in ("s1", "s2")}
    assert len(keys) == 4


def test_cold_cache_unwraps_the_stored_key(kms: FakeKms, store: MemoryKeyStore, clock: FakeClock) -> None:
    dk = _ring(kms, store, clock).data_key("t1", "s1")
    other_process = _ring(kms, store, clock)
    assert other_process.read_key("t1", "s1", dk.key_id) == dk.key
    assert other_process.data_key("t1", "s1") == dk
    assert kms.calls == ["generate", "unwrap"]


def test_lru_is_bounded(kms: FakeKms, store: MemoryKeyStore, clock: FakeClock) -> None:
    ring = _ring(kms, store, clock, max_entries=2)
    a, _b = ring.data_key("t1", "a"), ring.data_key("t1", "b")
    ring.read_key("t1", "a", a.key_id)  # a is now the most recently used
    ring.data_key("t1", "c")  # evicts b
    kms.calls.clear()
    ring.data_key("t1", "a")
    ring.data_key("t1", "c")
    assert kms.calls == []
    ring.data_key("t1", "b")
    assert kms.calls == ["unwrap"]


def test_ttl_expiry_uses_the_injected_clock(kms: FakeKms, store: MemoryKeyStore, clock: FakeClock) -> None:
    ring = _ring(kms, store, clock, ttl_seconds=60)
    dk = ring.data_key("t1", "s1")
    clock.t += 59.9
    ring.read_key("t1", "s1", dk.key_id)
    assert kms.calls == ["generate"]
    clock.t += 0.1  # 60 s after the unwrap, however recently used
    assert ring.read_key("t1", "s1", dk.key_id) == dk.key
    assert kms.calls == ["generate", "unwrap"]


def test_ttl_cannot_exceed_five_minutes(kms: FakeKms, store: MemoryKeyStore, clock: FakeClock) -> None:
    with pytest.raises(ValueError):
        _ring(kms, store, clock, ttl_seconds=301)


def test_use_cap_forces_a_fresh_unwrap(kms: FakeKms, store: MemoryKeyStore, clock: FakeClock) -> None:
    ring = _ring(kms, store, clock, max_uses=3)
    dk = ring.data_key("t1", "s1")  # use 1
    ring.read_key("t1", "s1", dk.key_id)  # use 2
    ring.read_key("t1", "s1", dk.key_id)  # use 3: the entry is spent
    assert kms.calls == ["generate"]
    ring.read_key("t1", "s1", dk.key_id)
    assert kms.calls == ["generate", "unwrap"]


def test_forget_evicts_without_destroying(kms: FakeKms, store: MemoryKeyStore, clock: FakeClock) -> None:
    ring = _ring(kms, store, clock)
    dk = ring.data_key("t1", "s1")
    ring.forget("t1", "s1")
    assert ring.read_key("t1", "s1", dk.key_id) == dk.key
    assert kms.calls == ["generate", "unwrap"]


def test_shred_then_read_fails_and_a_new_write_gets_a_new_key(
    kms: FakeKms, store: MemoryKeyStore, clock: FakeClock
) -> None:
    ring = _ring(kms, store, clock)
    aad = Aad("t1", "s1", "mem-1", "text")
    dk = ring.data_key("t1", "s1")
    blob = seal(dk.key, key_id=dk.key_id, aad=aad, plaintext="IBAN FR76 3000 6000 0112 3456 7890 189")
    other = ring.data_key("t1", "s2")

    assert ring.shred("t1", "s1") is True
    assert store.get("t1", "s1") is None
    with pytest.raises(KeyDestroyed):
        ring.read_key("t1", "s1", header_key_id(blob))  # the cache was evicted too
    assert ring.shred("t1", "s1") is False

    fresh = ring.data_key("t1", "s1")  # the subject comes back: a new key, the old blob stays dead
    assert fresh.key_id != dk.key_id and fresh.key != dk.key
    with pytest.raises(KeyDestroyed):
        ring.read_key("t1", "s1", header_key_id(blob))
    assert ring.read_key("t1", "s2", other.key_id) == other.key  # other subjects untouched


def test_read_never_creates(kms: FakeKms, store: MemoryKeyStore, clock: FakeClock) -> None:
    with pytest.raises(KeyDestroyed):
        _ring(kms, store, clock).read_key("t1", "nobody", "k1")
    assert store.entries == {} and kms.calls == []


def test_forget_tenant(kms: FakeKms, store: MemoryKeyStore, clock: FakeClock) -> None:
    ring = _ring(kms, store, clock)
    ring.data_key("t1", "a")
    ring.data_key("t2", "a")
    ring.forget_tenant("t1")
    kms.calls.clear()
    ring.data_key("t2", "a")
    ring.data_key("t1", "a")
    assert kms.calls == ["unwrap"]


def test_rewrap_all_moves_every_key_to_the_new_version(kms: FakeKms, store: MemoryKeyStore, clock: FakeClock) -> None:
    ring = _ring(kms, store, clock)
    aad = Aad("t1", "s3", "mem-9", "text")
    before = {s: ring.data_key("t1", s) for s in ("s1", "s2", "s3", "s4", "s5")}
    blob = seal(before["s3"].key, key_id=before["s3"].key_id, aad=aad, plaintext="rappel mardi")
    ring.data_key("t2", "s1")
    assert kms.rotate("t1") == 2

    report = ring.rewrap_all("t1", batch_size=2)

    assert (report.rewrapped, report.skipped) == (5, 0)
    assert [c for c in kms.calls if c.startswith("rewrap")] == ["rewrap:2", "rewrap:2", "rewrap:1"]
    assert {k.wrapped.kek_version for k in store.scan("t1")} == {2}
    assert {k.wrapped.kek_version for k in store.scan("t2")} == {1}
    cold = _ring(kms, store, clock)  # the same data keys under the new wrapping: old blobs still open
    assert open_(cold.read_key("t1", "s3", header_key_id(blob)), aad=aad, blob=blob) == b"rappel mardi"
    assert all(cold.data_key("t1", s) == dk for s, dk in before.items())


def test_rewrap_does_not_resurrect_a_shredded_key(kms: FakeKms, store: MemoryKeyStore, clock: FakeClock) -> None:
    ring = _ring(kms, store, clock)
    ring.data_key("t1", "s1")
    ring.data_key("t1", "s2")
    real_rewrap = kms.rewrap

    def rewrap_while_erasing(wrapped: Sequence[WrappedKey]) -> list[WrappedKey]:
        ring.shred("t1", "s1")  # an erasure lands between the scan and the write-back
        return real_rewrap(wrapped)

    kms.rewrap = rewrap_while_erasing  # type: ignore[method-assign]
    report = ring.rewrap_all("t1")
    assert (report.rewrapped, report.skipped) == (1, 1)
    assert store.get("t1", "s1") is None


def test_malformed_kms_answers_are_refused(kms: FakeKms, store: MemoryKeyStore, clock: FakeClock) -> None:
    ring = _ring(kms, store, clock)
    ring.data_key("t1", "s1")
    kms.rewrap = lambda wrapped: []  # type: ignore[method-assign]
    with pytest.raises(CryptoError):
        ring.rewrap_all("t1")
    kms.generate_data_key = lambda tenant: (b"short", WrappedKey(tenant, "x", 1))  # type: ignore[method-assign]
    with pytest.raises(CryptoError):
        ring.data_key("t1", "s2")


def test_losing_a_creation_race_adopts_the_stored_key(kms: FakeKms, store: MemoryKeyStore, clock: FakeClock) -> None:
    winner = _ring(kms, store, clock).data_key("t1", "s1")
    ring = _ring(kms, store, clock)
    real_get = store.get
    store.get = lambda tenant, subject: None  # type: ignore[method-assign]  # looked before the winner wrote
    try:
        assert ring.data_key("t1", "s1") == winner
    finally:
        store.get = real_get  # type: ignore[method-assign]


def test_concurrent_first_writes_share_one_key(kms: FakeKms, store: MemoryKeyStore, clock: FakeClock) -> None:
    ring = _ring(kms, store, clock)
    barrier = threading.Barrier(8)
    seen: list[bytes] = []

    def write() -> None:
        barrier.wait()
        seen.append(ring.data_key("t1", "s1").key)

    threads = [threading.Thread(target=write) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(seen)) == 1 and kms.calls == ["generate"]


class RecordedInvalidations:
    """``KeyInvalidations`` that records what would be told to the other processes."""

    errors = 0

    def __init__(self) -> None:
        self.told: list[tuple[str, str | None]] = []

    def publish(self, tenant: str, subject: str | None) -> None:
        self.told.append((tenant, subject))

    def subscribe(self, evictions: object) -> None:
        pass

    def close(self) -> None:
        pass


class FailingDelete(MemoryKeyStore):
    def delete(self, tenant: str, subject: str) -> bool:
        raise CryptoError("the key store refused", tenant=tenant)


def test_shreds_are_told_once_after_the_key_is_gone(kms: FakeKms, store: MemoryKeyStore, clock: FakeClock) -> None:
    told = RecordedInvalidations()
    ring = Keyring(kms, store, clock=clock, invalidations=told)
    for s in ("s1", "s2", "s3"):
        ring.data_key("t1", s)
    assert ring.shred("t1", "s1")
    assert told.told == [("t1", "s1")] and store.get("t1", "s1") is None
    assert ring.shred_tenant("t1") == 2
    assert told.told == [("t1", "s1"), ("t1", None)]  # one message for the tenant, not one per subject
    failing = Keyring(kms, FailingDelete(), clock=clock, invalidations=told)
    with pytest.raises(CryptoError):
        failing.shred("t1", "s9")
    assert told.told[-1] == ("t1", "s9")  # told all the same: whatever is cached elsewhere goes too


def test_evictions_from_elsewhere(kms: FakeKms, store: MemoryKeyStore, clock: FakeClock) -> None:
    ring = _ring(kms, store, clock)
    for t, s in (("t1", "s1"), ("t1", "s2"), ("t2", "s1")):
        ring.data_key(t, s)
    ring.evict("t1", "s1")
    assert not ring.cached("t1", "s1") and ring.cached("t1", "s2")
    ring.evict("t1", None)
    assert not ring.cached("t1", "s2") and ring.cached("t2", "s1")
    ring.evict_all()
    assert not ring.cached("t2", "s1")
    assert store.get("t1", "s1") is not None  # evicting never destroys


def test_an_eviction_waits_for_a_load_in_flight(kms: FakeKms, store: MemoryKeyStore, clock: FakeClock) -> None:
    """A load that read the key store just before a shred elsewhere must not put the key back after
    the eviction for it has passed: the eviction takes the subject's stripe and waits for the load."""
    _ring(kms, store, clock).data_key("t1", "s1")
    unwrapping, release = threading.Event(), threading.Event()
    unwrap = kms.unwrap

    def slow_unwrap(wrapped: WrappedKey) -> bytes:
        unwrapping.set()
        release.wait(5)
        return unwrap(wrapped)

    kms.unwrap = slow_unwrap  # type: ignore[method-assign]
    ring = _ring(kms, store, clock)
    loader = threading.Thread(target=ring.data_key, args=("t1", "s1"))
    loader.start()
    assert unwrapping.wait(5)
    evictor = threading.Thread(target=ring.evict, args=("t1", "s1"))
    evictor.start()
    evictor.join(0.1)
    assert evictor.is_alive()  # waiting for the load
    release.set()
    loader.join(5)
    evictor.join(5)
    assert not ring.cached("t1", "s1")
