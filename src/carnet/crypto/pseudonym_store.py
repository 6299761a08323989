"""Pseudonym maps kept in the catalog, sealed under each subject's data key.

A map names the subject's people and identifiers in clear (that is its job), so it is sealed like a
record, bound to (tenant, subject hash, ``~pseudonyms``, ``map``), and dies with the subject's key.
Saves are compare-and-swap on a version, so two writers never number two people alike. Decoded maps
are cached briefly (reads need one per query); a save or an erasure drops the cached copy, and an
erasure in another process drops it here too (``services/lifecycle/evictions.py``), since a cached map names
the erased subject's people in clear.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

from carnet.crypto.envelope import Aad, header_key_id, open_, seal
from carnet.crypto.keyring import Keyring
from carnet.domain.pii.pseudonyms import PseudonymMap
from carnet.domain.records import Scope
from carnet.errors import Conflict
from carnet.ports import SealedMapStore

_RECORD = "~pseudonyms"
_FIELD = "map"


class SealedPseudonymMaps:
    def __init__(self, catalog: SealedMapStore, keyring: Keyring, *, cache_size: int = 10_000,
                 ttl: float = 30.0) -> None:
        self._catalog = catalog
        self._keyring = keyring
        self._cache: OrderedDict[Scope, tuple[float, PseudonymMap]] = OrderedDict()
        self._size = cache_size
        self._ttl = ttl
        self._lock = threading.Lock()

    def load(self, scope: Scope) -> PseudonymMap:
        """A copy the caller may change (and then ``save``)."""
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(scope)
            if hit is not None and hit[0] > now:
                self._cache.move_to_end(scope)
                return hit[1].copy()
        stored = self._catalog.pseudonym_map(scope)
        pmap = PseudonymMap() if stored is None else PseudonymMap.from_bytes(self.open(scope, stored[0]),
                                                                            version=stored[1])
        self._remember(scope, pmap, now)
        return pmap.copy()

    def save(self, scope: Scope, pmap: PseudonymMap) -> None:
        if not self._catalog.put_pseudonym_map(scope, self.seal(scope, pmap), version=pmap.version):
            self.forget(scope)
            raise Conflict("the subject's pseudonym map changed meanwhile; retry the write")
        saved = PseudonymMap(dict(pmap.entries), dict(pmap.counters), False, pmap.version + 1)
        self._remember(scope, saved, time.monotonic())

    def forget(self, scope: Scope) -> None:
        with self._lock:
            self._cache.pop(scope, None)

    def forget_tenant(self, tenant: str) -> None:
        with self._lock:
            for scope in [s for s in self._cache if s.tenant == tenant]:
                del self._cache[scope]

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()

    def cached(self, scope: Scope) -> bool:
        """Whether a decoded copy of the subject's map is in memory (tests and diagnostics)."""
        with self._lock:
            return scope in self._cache

    def seal(self, scope: Scope, pmap: PseudonymMap) -> bytes:
        dk = self._keyring.data_key(scope.tenant, scope.subject)
        return seal(dk.key, key_id=dk.key_id, aad=_aad(scope), plaintext=pmap.to_bytes())

    def open(self, scope: Scope, sealed: bytes) -> bytes:
        key = self._keyring.read_key(scope.tenant, scope.subject, header_key_id(sealed))
        return open_(key, aad=_aad(scope), blob=sealed)

    def _remember(self, scope: Scope, pmap: PseudonymMap, now: float) -> None:
        with self._lock:
            self._cache[scope] = (now + self._ttl, pmap)
            self._cache.move_to_end(scope)
            while len(self._cache) > self._size:
                self._cache.popitem(last=False)


def _aad(scope: Scope) -> Aad:
    return Aad(scope.tenant, scope.subject, _RECORD, _FIELD)
