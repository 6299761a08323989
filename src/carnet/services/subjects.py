"""The subject registry: each subject written is recorded once, by hash, with its id sealed.

That sealed id is what lets ``carnet keys rehash`` recompute every hash under a new tenant hash key.
Registration happens on a subject's first write; a bounded in-process memory of the subjects
already registered keeps it off the hot path (one catalog read per subject per process).
"""

from __future__ import annotations

import base64
import threading
from collections import OrderedDict

from carnet.domain.records import Scope
from carnet.ports import SubjectDirectory, SubjectHasher, SubjectIdSealer

SEALED_PREFIX = "enc1:"


class SubjectRegistry:
    def __init__(self, catalog: SubjectDirectory, hasher: SubjectHasher, sealer: SubjectIdSealer, *,
                 remember: int = 100_000) -> None:
        self._catalog = catalog
        self._hasher = hasher
        self._sealer = sealer
        self._known: OrderedDict[Scope, None] = OrderedDict()
        self._cap = remember
        self._lock = threading.Lock()

    def ensure(self, scope: Scope, subject_id: str) -> None:
        with self._lock:
            if scope in self._known:
                self._known.move_to_end(scope)
                return
        if not self._catalog.is_registered(scope):
            sealed = self._sealer.seal_id(scope, subject_id)
            self._catalog.register_subject(scope, hash_key=self._hasher.hash_key(scope.tenant), sealed_id=sealed)
        with self._lock:
            self._known[scope] = None
            while len(self._known) > self._cap:
                self._known.popitem(last=False)

    def seal_value(self, scope: Scope, name: str, value: str) -> str:
        """A value of the subject kept in the catalog (a legal-hold reference), sealed under the
        subject's data key, as text: ``enc1:`` + base64."""
        return SEALED_PREFIX + base64.b64encode(self._sealer.seal_value(scope, name, value)).decode("ascii")

    def open_value(self, scope: Scope, name: str, stored: str | None) -> str | None:
        """``seal_value`` undone; a value stored before values were sealed reads back as it is."""
        if stored is None or not stored.startswith(SEALED_PREFIX):
            return stored
        return self._sealer.open_value(scope, name, base64.b64decode(stored[len(SEALED_PREFIX):]))

    def forget(self, scope: Scope) -> None:
        with self._lock:
            self._known.pop(scope, None)
