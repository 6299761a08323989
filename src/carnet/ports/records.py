"""The records as the services see them: stored sealed, opened on demand.

A ``RecordStore`` is a :class:`~carnet.ports.vectors.VectorIndex` whose record texts and metadata are
sealed under the subject's key on the way in (``carnet.crypto.sealed_index.SealedIndex`` implements it
over a bare ``VectorIndex``). What it adds is the choice of when to open them: opening costs a key
lookup and a decryption per field, so the hot path opens only the records it keeps (``reveal``), and
passes that read metadata only (maintenance, erasure) open nothing (``reveal=False``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from carnet.domain.records import Memory, Scope
from carnet.domain.unreadable import Skipped
from carnet.ports.vectors import RecordFilter, VectorIndex


class RecordStore(VectorIndex, Protocol):
    """A ``VectorIndex`` that seals record texts: ``reveal``, and reads that open or not.

    ``hybrid_search`` returns candidates still sealed (ranking reads no text: case links use
    ``blind_index``): call ``reveal`` on the records you keep. Every read (``hybrid_search``, ``reveal``,
    ``get``, ``scroll``) also leaves out a record whose ciphertext or data key does not open, noted in
    ``skipped``; an unavailable KMS is raised."""

    def reveal(self, scope: Scope, memories: Sequence[Memory], *, pseudo_text: bool = False,
               skipped: Skipped | None = None) -> list[Memory]:
        """The same records with ``text`` readable, and ``pseudo_text`` too when asked (reconcile reads
        it; what is shown to callers never does), in the same order, less those that do not open.
        A record already readable is returned as it is."""
        ...

    def get(self, scope: Scope, ids: Sequence[str], *, reveal: bool = True,
            skipped: Skipped | None = None) -> list[Memory]:
        """``reveal=False``: as stored (sealed), to check that records exist without decrypting them."""
        ...

    def scroll(
        self, scope: Scope, *, where: RecordFilter, limit: int, offset: str | None = None, reveal: bool = True,
        skipped: Skipped | None = None,
    ) -> tuple[list[Memory], str | None]:
        """``reveal=False``: texts come back as stored (sealed), for passes that read only metadata
        (maintenance): no data key is unwrapped and no text is opened."""
        ...

    def newest(self, scope: Scope, *, where: RecordFilter, limit: int, reveal: bool = True,
               skipped: Skipped | None = None) -> list[Memory]:
        """``VectorIndex.newest``; ``reveal`` as for ``scroll``."""
        ...
