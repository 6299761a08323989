"""What this process drops when another one destroyed keys (``CacheEvictions``, called by the
``KeyInvalidations`` listener): the same caches an erasure drops in the process that runs it
(``services/rights/erase.py``), so a subject erased on one node is not served from another node's memory.

- the data key (``Keyring.evict``: after any load in flight, so none puts it back);
- the pseudonym map (it names the subject's people in clear);
- the subject's registration (its next write registers it again) and the tenant's cached query
  embeddings (they may come from the subject's calls).

A tenant shred drops all of the tenant's; ``evict_all`` (the listener lost messages) drops every
key and map."""

from __future__ import annotations

from carnet.crypto.keyring import Keyring
from carnet.domain.records import Scope
from carnet.ports import PseudonymMaps
from carnet.services.memories.query_cache import CachedEmbedder
from carnet.services.subjects import SubjectRegistry


class CachedCopies:
    def __init__(self, *, keyring: Keyring, maps: PseudonymMaps, subjects: SubjectRegistry,
                 embedder: CachedEmbedder) -> None:
        self._keyring, self._maps, self._subjects, self._embedder = keyring, maps, subjects, embedder

    def evict(self, tenant: str, subject: str | None) -> None:
        self._keyring.evict(tenant, subject)
        if subject is None:
            self._maps.forget_tenant(tenant)
        else:
            scope = Scope(tenant, subject)
            self._maps.forget(scope)
            self._subjects.forget(scope)
        self._embedder.clear(tenant)

    def evict_all(self) -> None:
        self._keyring.evict_all()
        self._maps.clear()
        self._embedder.clear()
