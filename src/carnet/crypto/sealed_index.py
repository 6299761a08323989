"""The ``RecordStore`` over a ``VectorIndex``: a record's text never reaches the store in clear.

It wraps the real index (qdrant-edge or Qdrant server): on the way in, ``text`` and ``pseudo_text``
are sealed with AES-256-GCM under the subject's data key, bound to (tenant, subject hash, record id,
field, key id); on the way out they are opened. The caller's metadata, which callers fill with names
and phone numbers as readily as with codes (``category``, ``tags``, ``session_id``, ``sources`` with
their idempotency keys and session ids), is sealed the same way, together, in the field ``meta``;
``category``, which the list filter matches, is stored as a keyed hash (``h1:`` + HMAC under a key
derived from the subject's data key), so erasure makes it unlinkable too. Everything that must be
filtered or sorted on and says nothing about the person (ids, kind, status, timestamps, scores,
blind-index tokens) stays in clear, as DESIGN.md says. The vectors are computed by the caller from
``pseudo_text`` before they get here.

Sealed fields are stored as ``"enc1:" + base64(envelope)``. A text field without that prefix is
refused, never passed through: a store written without encryption cannot be read as if it were
sealed. A record written before metadata was sealed (no ``meta``) reads back with its metadata as
stored; it is sealed when next rewritten (rectify, merge, supersession).

A record that does not open (its ciphertext altered, its data key altered, removed or unreadable in
the key store, refused by the KMS) is left out of the answer and noted in the caller's ``skipped``
list with the error's code: one damaged record, or a subject whose key is damaged, never fails a
whole page, a search or an export. An unavailable KMS is raised (a failure of the moment, not of the
record).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from carnet.crypto.envelope import Aad, header_key_id, open_text, seal
from carnet.crypto.errors import EnvelopeError
from carnet.crypto.keyring import Keyring
from carnet.domain.records import Memory, Scope, Source
from carnet.domain.unreadable import DECODE_ERRORS, Skipped, note
from carnet.errors import CarnetError, DependencyUnavailable
from carnet.ports import (
    AccessUpdate,
    HybridHits,
    IndexedMemory,
    Kms,
    RecordFilter,
    SparseVector,
    Vector,
    VectorIndex,
)

PREFIX = "enc1:"
SEALED_FIELDS = ("text", "pseudo_text")  # each its own envelope
META_FIELD = "meta"  # category, tags, session id and sources: one envelope
TOKEN_PREFIX = "h1:"  # a keyed hash in a filterable field (``category``)
_NO_MATCH = TOKEN_PREFIX + "-"  # the category filter of a subject without a data key: nothing matches


def _blob(value: str) -> bytes:
    if not value.startswith(PREFIX):
        raise EnvelopeError("a stored record field is not sealed")
    return base64.b64decode(value[len(PREFIX):])


def _metadata_json(m: Memory) -> str:
    return json.dumps({"category": m.category, "tags": list(m.tags), "session_id": m.session_id,
                       "sources": [[s.kind, s.ref, s.session_id, s.request, s.fingerprint] for s in m.sources]},
                      ensure_ascii=False, separators=(",", ":"))


def _with_metadata(m: Memory, text: str) -> Memory:
    d: dict[str, Any] = json.loads(text)
    return m.with_metadata(category=d["category"], tags=tuple(d["tags"]), session_id=d["session_id"],
                           sources=tuple(Source(*s) for s in d["sources"]), meta=None)


def category_token(data_key: bytes, category: str) -> str:
    """The keyed hash stored in ``category`` and matched by the category filter."""
    key = hmac.new(data_key, b"carnet/category/v1", hashlib.sha256).digest()
    return TOKEN_PREFIX + hmac.new(key, category.encode(), hashlib.sha256).hexdigest()[:32]


class SealedIndex:
    """``RecordStore`` over a ``VectorIndex``: seals on write, opens on read, delegates everything else."""

    def __init__(self, inner: VectorIndex, keyring: Keyring, kms: Kms) -> None:
        self._inner = inner
        self._keyring = keyring
        self._kms = kms
        self._tenants: set[str] = set()
        self._tenant_lock = threading.Lock()

    # -- sealing ----------------------------------------------------------------------------

    def _ensure_tenant(self, tenant: str) -> None:
        if tenant in self._tenants:
            return
        with self._tenant_lock:
            if tenant not in self._tenants:
                self._kms.ensure_tenant_key(tenant)
                self._tenants.add(tenant)

    def _seal(self, scope: Scope, memories: Sequence[Memory]) -> list[Memory]:
        self._ensure_tenant(scope.tenant)
        dk = self._keyring.data_key(scope.tenant, scope.subject)

        def sealed(m: Memory, name: str, plaintext: str) -> str:
            aad = Aad(scope.tenant, scope.subject, m.id, name)
            blob = seal(dk.key, key_id=dk.key_id, aad=aad, plaintext=plaintext)
            return PREFIX + base64.b64encode(blob).decode("ascii")

        def sealed_memory(m: Memory) -> Memory:
            if m.text.startswith(PREFIX) or m.meta is not None:  # a candidate written back without ``reveal``
                raise EnvelopeError("refusing to seal an already sealed field")
            texts = m.with_texts(*(sealed(m, name, getattr(m, name)) for name in SEALED_FIELDS))
            token = None if m.category is None else category_token(dk.key, m.category)
            return texts.with_metadata(category=token, tags=(), session_id=None, sources=(),
                                       meta=sealed(m, META_FIELD, _metadata_json(m)))

        return [sealed_memory(m) for m in memories]

    def _narrowed(self, scope: Scope, where: RecordFilter) -> RecordFilter:
        """``where`` with its category as the keyed hash the records store."""
        if where.category is None:
            return where
        if not self._keyring.exists(scope.tenant, scope.subject):  # never create a key to read
            return replace(where, category=_NO_MATCH)
        try:
            dk = self._keyring.data_key(scope.tenant, scope.subject)
        except DependencyUnavailable:
            raise
        except CarnetError:  # a damaged key: its records are unreadable anyway, the filter matches none
            return replace(where, category=_NO_MATCH)
        return replace(where, category=category_token(dk.key, where.category))

    def _opener(self, scope: Scope, skipped: Skipped | None, *, pseudo_text: bool = True
                ) -> Callable[[Memory], Memory | None]:
        keys: dict[str, bytes] = {}  # one read_key per key id per call
        refused: dict[str, CarnetError] = {}  # and one refusal: a damaged key is not asked for again

        def key_for(key_id: str) -> bytes:
            if key_id in refused:
                raise refused[key_id]
            key = keys.get(key_id)
            if key is None:
                try:
                    key = keys[key_id] = self._keyring.read_key(scope.tenant, scope.subject, key_id)
                except DependencyUnavailable:
                    raise
                except CarnetError as exc:
                    refused[key_id] = exc
                    raise
            return key

        def open_value(m: Memory, name: str, value: str) -> str:
            blob = _blob(value)
            key = key_for(header_key_id(blob))
            return open_text(key, aad=Aad(scope.tenant, scope.subject, m.id, name), blob=blob)

        def open_field(m: Memory, name: str) -> str:
            value = getattr(m, name)
            if not isinstance(value, str):
                raise TypeError("a stored text field is not a string")
            return open_value(m, name, value)

        def open_memory(m: Memory) -> Memory | None:
            try:
                pseudo = open_field(m, "pseudo_text") if pseudo_text else m.pseudo_text
                out = m.with_texts(open_field(m, "text"), pseudo)
                if m.meta is not None:  # absent: written before metadata was sealed, kept as stored
                    out = _with_metadata(out, open_value(m, META_FIELD, m.meta))
            except DependencyUnavailable:
                raise
            except CarnetError as exc:
                note(skipped, m.id, exc.code)
                return None
            except DECODE_ERRORS:  # base64 that does not decode, a field of the wrong type, bad metadata
                note(skipped, m.id, EnvelopeError.code)
                return None
            return out

        return open_memory

    def _open_all(self, scope: Scope, memories: Sequence[Memory], skipped: Skipped | None, *,
                  pseudo_text: bool = True) -> list[Memory]:
        opener = self._opener(scope, skipped, pseudo_text=pseudo_text)
        return [m for m in map(opener, memories) if m is not None]

    @property
    def inner(self) -> VectorIndex:
        """The store underneath, records as stored (sealed): re-erasure reads it (an erased subject's
        records open with no key), and so do tests checking what is on disk."""
        return self._inner

    # -- the RecordStore port -------------------------------------------------------------------

    def upsert(self, scope: Scope, items: Sequence[IndexedMemory]) -> None:
        sealed = self._seal(scope, [i.memory for i in items])
        self._inner.upsert(scope, [replace(i, memory=m) for i, m in zip(items, sealed, strict=True)])

    def replace_payload(self, scope: Scope, memories: Sequence[Memory]) -> None:
        self._inner.replace_payload(scope, self._seal(scope, memories))

    def hybrid_search(self, scope: Scope, *, dense: Vector, sparse: SparseVector | None, limit: int,
                      where: RecordFilter, with_vectors: bool = False, skipped: Skipped | None = None) -> HybridHits:
        # Ranking reads neither text (case links compare blind-index tokens): candidates stay sealed,
        # and ``reveal`` opens the few records kept instead of every candidate.
        return self._inner.hybrid_search(scope, dense=dense, sparse=sparse, limit=limit,
                                         where=self._narrowed(scope, where), with_vectors=with_vectors,
                                         skipped=skipped)

    def reveal(self, scope: Scope, memories: Sequence[Memory], *, pseudo_text: bool = False,
               skipped: Skipped | None = None) -> list[Memory]:
        opener = self._opener(scope, skipped, pseudo_text=pseudo_text)
        out = []
        for m in memories:
            shown = opener(m) if m.text.startswith(PREFIX) else m
            if shown is not None:
                out.append(shown)
        return out

    def get(self, scope: Scope, ids: Sequence[str], *, reveal: bool = True,
            skipped: Skipped | None = None) -> list[Memory]:
        if not ids:
            return []
        found = self._inner.get(scope, ids, skipped=skipped)
        return self._open_all(scope, found, skipped) if reveal else found

    def scroll(self, scope: Scope, *, where: RecordFilter, limit: int, offset: str | None = None,
               reveal: bool = True, skipped: Skipped | None = None) -> tuple[list[Memory], str | None]:
        items, nxt = self._inner.scroll(scope, where=self._narrowed(scope, where), limit=limit, offset=offset,
                                        skipped=skipped)
        if not reveal:  # metadata only (maintenance, erasure): no data key unwrapped, no text opened
            return items, nxt
        return self._open_all(scope, items, skipped), nxt

    def newest(self, scope: Scope, *, where: RecordFilter, limit: int, reveal: bool = True,
               skipped: Skipped | None = None) -> list[Memory]:
        items = self._inner.newest(scope, where=self._narrowed(scope, where), limit=limit, skipped=skipped)
        return self._open_all(scope, items, skipped) if reveal else items

    def count(self, scope: Scope, *, where: RecordFilter) -> int:
        return self._inner.count(scope, where=self._narrowed(scope, where))

    def delete(self, scope: Scope, ids: Sequence[str]) -> None:
        self._inner.delete(scope, ids)

    def rescope(self, old: Scope, new: Scope, items: Sequence[tuple[Memory, SparseVector]]) -> None:
        """The records, given readable and in scope ``new``, are sealed under ``new`` (its hash is in
        the associated data) with the subject's data key, which the caller has made reachable there."""
        sealed = self._seal(new, [m for m, _ in items])
        self._inner.rescope(old, new, [(m, sparse) for m, (_, sparse) in zip(sealed, items, strict=True)])

    def record_access(self, scope: Scope, updates: Sequence[AccessUpdate]) -> None:
        self._inner.record_access(scope, updates)

    def check(self) -> None:
        self._inner.check()
        self._kms.check()

    def compact(self) -> bool:
        return self._inner.compact()

    def close(self) -> None:
        self._inner.close()
