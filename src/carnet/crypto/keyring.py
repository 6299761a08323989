"""Per-subject data keys: created through the KMS, stored wrapped, cached unwrapped for minutes.

The write path asks ``data_key`` (created on the subject's first write); the read path asks
``read_key`` with the key id found in a blob's header, and never creates anything. That split is how
an erased subject differs from a new one: after ``shred`` the next write creates a fresh key under a
new id, while every blob sealed before names the destroyed id and fails with ``KeyDestroyed``.

The cache keeps KMS round trips off the hot path and bounds how long plaintext keys stay in memory:
at most ``max_entries`` keys (least recently used evicted first), each dropped ``ttl_seconds`` after
it was unwrapped and after ``max_uses`` uses, whichever comes first, so that a key revoked in the
KMS stops being used within the TTL. (Python cannot wipe ``bytes``; dropping references is the best
it offers.)

A shred is told to the other processes (``KeyInvalidations``: PostgreSQL ``NOTIFY`` with the
PostgreSQL control plane), which ``evict`` the key within seconds; the TTL remains the bound when
that message is lost (docs/operations.md, "Key cache across processes").

Thread-safe: a lock guards the cache, and one of 64 striped locks serialises the KMS and key-store
work of a subject, so concurrent misses unwrap once and ``shred`` cannot race a reload into the cache.
"""

from __future__ import annotations

import contextlib
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import NamedTuple

from carnet.crypto.envelope import KEY_BYTES
from carnet.crypto.errors import CryptoError, KeyDestroyed
from carnet.ports import KeyInvalidations, KeyStore, Kms, StoredKey, WrappedKey

MAX_TTL_SECONDS = 300.0
_STRIPES = 64

_Slot = tuple[str, str]  # (tenant, subject hash)


class DataKey(NamedTuple):
    key_id: str
    key: bytes


@dataclass(frozen=True, slots=True)
class RewrapReport:
    rewrapped: int
    skipped: int  # erased or changed by someone else during the pass


@dataclass(slots=True)
class _Entry:
    key_id: str
    key: bytes
    uses_left: int


class Keyring:
    def __init__(
        self,
        kms: Kms,
        store: KeyStore,
        *,
        max_entries: int = 10_000,
        ttl_seconds: float = MAX_TTL_SECONDS,
        max_uses: int = 100_000,
        clock: Callable[[], float] = time.monotonic,
        invalidations: KeyInvalidations | None = None,
    ) -> None:
        """``invalidations``: where shreds are told to other processes (``None``: this process is the
        only one holding keys, the embedded default)."""
        if max_entries < 1 or max_uses < 1 or not 0 < ttl_seconds <= MAX_TTL_SECONDS:
            raise ValueError("need max_entries >= 1, max_uses >= 1 and 0 < ttl_seconds <= 300")
        self._kms, self._store, self._clock = kms, store, clock
        self._invalidations = invalidations
        self._max_entries, self._ttl, self._max_uses = max_entries, ttl_seconds, max_uses
        self._entries: OrderedDict[_Slot, _Entry] = OrderedDict()  # least recently used first
        self._expiry: OrderedDict[_Slot, float] = OrderedDict()  # soonest to expire first
        self._lock = threading.Lock()
        self._stripes = tuple(threading.Lock() for _ in range(_STRIPES))
        # Read by the metrics collector: cache efficiency and the KMS's latency on the request path.
        self.cache_hits = 0
        self.cache_misses = 0
        self.kms_timings: Callable[[str, float], None] = lambda operation, seconds: None
        # Asked before a subject's key is created (bootstrap: the subject's lock is held, and still
        # held). It raises to refuse, and nothing is created: a write that began before an erasure
        # and goes on after it must not give the erased subject a new key.
        self.before_create: Callable[[str, str], None] = lambda tenant, subject: None

    def data_key(self, tenant: str, subject: str) -> DataKey:
        """Write path: the subject's current key, created and stored wrapped on first use."""
        slot = (tenant, subject)
        hit = self._take(slot, None)
        if hit is not None:
            return hit
        with self._stripe(slot):
            hit = self._take(slot, None, recheck=True)  # another thread may have loaded it meanwhile
            if hit is not None:
                return hit
            stored = self._store.get(tenant, subject)
            if stored is None:
                self.before_create(tenant, subject)
                stored, key = self._create(tenant, subject)
            else:
                key = self._unwrap(stored.wrapped)
            return self._admit(slot, stored.key_id, key)

    def read_key(self, tenant: str, subject: str, key_id: str) -> bytes:
        """Read path: the key named ``key_id`` (from ``header_key_id``), or ``KeyDestroyed``."""
        slot = (tenant, subject)
        hit = self._take(slot, key_id)
        if hit is not None:
            return hit.key
        with self._stripe(slot):
            hit = self._take(slot, key_id, recheck=True)
            if hit is not None:
                return hit.key
            stored = self._store.get(tenant, subject)
            if stored is None or stored.key_id != key_id:
                raise KeyDestroyed(tenant, subject, key_id)
            return self._admit(slot, key_id, self._unwrap(stored.wrapped)).key

    def forget(self, tenant: str, subject: str) -> None:
        """Drop the subject's unwrapped key from memory (the stored key stays)."""
        with self._lock:
            self._evict((tenant, subject))

    def forget_tenant(self, tenant: str) -> None:
        """Drop every cached key of the tenant (a tenant shred destroys its KMS key too)."""
        with self._lock:
            for slot in [s for s in self._entries if s[0] == tenant]:
                self._evict(slot)

    def evict(self, tenant: str, subject: str | None) -> None:
        """Another process destroyed the subject's key (``None``: the tenant's): drop it, after any
        load of it in flight here. Under the subject's stripe, so a load that read the key store just
        before the shred cannot put the key back after this."""
        stripes = self._stripes if subject is None else (self._stripe((tenant, subject)),)
        with contextlib.ExitStack() as held:
            for stripe in stripes:  # always in index order: no two evictions deadlock
                held.enter_context(stripe)
            if subject is None:
                self.forget_tenant(tenant)
            else:
                self.forget(tenant, subject)

    def evict_all(self) -> None:
        """Drop every cached key (a listener that missed messages cannot know which)."""
        with self._lock:
            self._entries.clear()
            self._expiry.clear()

    def cached(self, tenant: str, subject: str) -> bool:
        """Whether the subject's key is in memory now (for tests and diagnostics; no use counted)."""
        with self._lock:
            self._purge_expired()
            return (tenant, subject) in self._entries

    def shred(self, tenant: str, subject: str) -> bool:
        """Crypto-shred: destroy the stored wrapped key, forget it here and tell the other processes;
        ``True`` if a key existed."""
        try:
            return self._shred(tenant, subject)
        finally:
            self._publish(tenant, subject)

    def shred_tenant(self, tenant: str) -> int:
        """Delete every stored key of the tenant (the tenant hash key included), evict them all here
        and tell the other processes once; returns how many were deleted. Used after the tenant's KMS
        key is destroyed."""
        deleted = 0
        try:
            for stored in list(self._store.scan(tenant)):
                deleted += self._shred(tenant, stored.subject)
            self.forget_tenant(tenant)
        finally:
            self._publish(tenant, None)
        return deleted

    def _shred(self, tenant: str, subject: str) -> bool:
        slot = (tenant, subject)
        with self._stripe(slot):
            try:
                return self._store.delete(tenant, subject)
            finally:
                self.forget(tenant, subject)

    def _publish(self, tenant: str, subject: str | None) -> None:
        if self._invalidations is not None:
            self._invalidations.publish(tenant, subject)

    def exists(self, tenant: str, subject: str) -> bool:
        """Whether a wrapped key is stored for the subject (what an erasure receipt verifies)."""
        return self._store.get(tenant, subject) is not None

    def entries(self, tenant: str) -> list[StoredKey]:
        """Every stored key of the tenant (subjects and hash keys), for maintenance commands."""
        return list(self._store.scan(tenant))

    def copy_entry(self, tenant: str, source: str, target: str) -> bool:
        """Store ``source``'s wrapped key under the name ``target`` too (a re-hashed subject keeps its
        data key, so its records need no new key). ``False`` when ``source`` has no key."""
        stored = self._store.get(tenant, source)
        if stored is None:
            return False
        kept = self._store.put_if_absent(StoredKey(target, stored.key_id, stored.wrapped))
        if kept.key_id != stored.key_id:
            raise CryptoError("the target name already holds another data key", tenant=tenant)
        return True

    def rewrap_all(self, tenant: str, *, batch_size: int = 250) -> RewrapReport:
        """Rewrap every stored key of the tenant under the newest KEK version, ``batch_size`` per KMS
        call. Plaintext keys never leave the KMS and cached keys stay valid (same key, new wrapping)."""
        rewrapped = skipped = 0
        for batch in _batched(self._store.scan(tenant), batch_size):
            fresh = self._kms.rewrap([k.wrapped for k in batch])
            if len(fresh) != len(batch) or any(w.tenant != tenant for w in fresh):
                raise CryptoError("KMS rewrap answered for other keys than asked", tenant=tenant)
            for old, new in zip(batch, fresh, strict=True):
                if self._store.replace(old, StoredKey(old.subject, old.key_id, new)):
                    rewrapped += 1
                else:
                    skipped += 1
        return RewrapReport(rewrapped=rewrapped, skipped=skipped)

    def _create(self, tenant: str, subject: str) -> tuple[StoredKey, bytes]:
        started = time.perf_counter()
        key, wrapped = self._kms.generate_data_key(tenant)
        self.kms_timings("generate_data_key", time.perf_counter() - started)
        _check_key(key, wrapped, tenant)
        mine = StoredKey(subject=subject, key_id=secrets.token_urlsafe(12), wrapped=wrapped)
        stored = self._store.put_if_absent(mine)
        if stored != mine:  # another process created the subject's key first: use theirs
            key = self._unwrap(stored.wrapped)
        return stored, key

    def _unwrap(self, wrapped: WrappedKey) -> bytes:
        started = time.perf_counter()
        key = self._kms.unwrap(wrapped)
        self.kms_timings("unwrap", time.perf_counter() - started)
        _check_key(key, wrapped, wrapped.tenant)
        return key

    def _take(self, slot: _Slot, key_id: str | None, *, recheck: bool = False) -> DataKey | None:
        with self._lock:
            self._purge_expired()
            entry = self._entries.get(slot)
            if entry is None or (key_id is not None and entry.key_id != key_id):
                self.cache_misses += not recheck
                return None
            self.cache_hits += not recheck
            entry.uses_left -= 1
            if entry.uses_left <= 0:
                self._evict(slot)
            else:
                self._entries.move_to_end(slot)
            return DataKey(entry.key_id, entry.key)

    def _admit(self, slot: _Slot, key_id: str, key: bytes) -> DataKey:
        """Cache a freshly unwrapped key, counting the caller's use as its first."""
        with self._lock:
            self._evict(slot)
            if self._max_uses > 1:
                self._entries[slot] = _Entry(key_id, key, self._max_uses - 1)
                self._expiry[slot] = self._clock() + self._ttl
            while len(self._entries) > self._max_entries:
                self._evict(next(iter(self._entries)))
        return DataKey(key_id, key)

    def _purge_expired(self) -> None:
        now = self._clock()
        while self._expiry and next(iter(self._expiry.values())) <= now:
            self._evict(next(iter(self._expiry)))

    def _evict(self, slot: _Slot) -> None:
        self._entries.pop(slot, None)
        self._expiry.pop(slot, None)

    def _stripe(self, slot: _Slot) -> threading.Lock:
        return self._stripes[hash(slot) % _STRIPES]


def _check_key(key: bytes, wrapped: WrappedKey, tenant: str) -> None:
    if len(key) != KEY_BYTES or wrapped.tenant != tenant:
        raise CryptoError("KMS returned a malformed data key", tenant=tenant)


def _batched(items: Iterable[StoredKey], size: int) -> Iterator[list[StoredKey]]:
    if size < 1:
        raise ValueError("batch_size must be >= 1")
    it = iter(items)
    while batch := list(islice(it, size)):
        yield batch
