"""``SparseEncoder`` over keyed token hashes: BM25-style keyword vectors with no word in clear.

Each content token (``carnet.domain.text.content_terms``: stemmed, accent-folded, stopwords
removed) becomes the index ``BLAKE2b-32(token, key=tenant token key) & 0x7FFFFFFF``. The store
sees integers only; without the tenant's key, a dictionary attack on indices needs the key,
and a tenant shred (destroying the key) leaves the sparse vectors meaningless.

Values follow BM25's split: documents carry the term-frequency saturation
``tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl))``, queries carry 1.0 per distinct token, and the
IDF factor is applied by the vector store (Qdrant's ``Modifier.IDF`` on the sparse vector), which
is the only place that knows the corpus statistics.

Callers pass ``pseudo_text`` (PII replaced by placeholders), as the ``SparseEncoder`` port says.
"""

from __future__ import annotations

import hashlib
import threading
from collections import Counter
from typing import Protocol

from carnet.domain.records import Scope
from carnet.domain.text import content_terms
from carnet.ports import SparseVector

_PERSON = b"carnet:sparse:v1"  # BLAKE2 personalisation: these hashes are for sparse tokens only
_INDEX_MASK = 0x7FFFFFFF  # 31 bits: a non-negative index for every sparse-vector backend
_MAX_KEY = 64  # BLAKE2b key size limit


class TokenKeys(Protocol):
    """The part of ``carnet.ports.SubjectHasher`` this encoder uses."""

    def token_key(self, tenant: str) -> bytes: ...


class HashedSparseEncoder:
    """Deterministic per tenant: the same text in the same tenant always gives the same vector."""

    def __init__(self, hasher: TokenKeys, *, avg_doc_len: float = 12.0, k1: float = 1.2, b: float = 0.75) -> None:
        """``avg_doc_len`` is in content tokens; facts are short (~6–15), episodes longer."""
        if avg_doc_len <= 0 or k1 < 0 or not 0.0 <= b <= 1.0:
            raise ValueError("need avg_doc_len > 0, k1 >= 0 and 0 <= b <= 1")
        self._hasher = hasher
        self._avg_doc_len = avg_doc_len
        self._k1 = k1
        self._b = b
        self._keys: dict[str, bytes] = {}
        self._lock = threading.Lock()

    def encode_document(self, scope: Scope, text: str) -> SparseVector:
        terms = content_terms(text)
        counts = Counter(self._index(scope.tenant, t) for t in terms)
        norm = self._k1 * (1.0 - self._b + self._b * len(terms) / self._avg_doc_len)
        indices = sorted(counts)
        values = [counts[i] * (self._k1 + 1.0) / (counts[i] + norm) for i in indices]
        return SparseVector(indices=indices, values=values)

    def encode_query(self, scope: Scope, text: str) -> SparseVector:
        indices = sorted({self._index(scope.tenant, t) for t in content_terms(text)})
        return SparseVector(indices=indices, values=[1.0] * len(indices))

    def forget(self, tenant: str) -> None:
        """Drop the cached key: call it on key rotation and on a tenant shred."""
        with self._lock:
            self._keys.pop(tenant, None)

    def _index(self, tenant: str, token: str) -> int:
        digest = hashlib.blake2b(token.encode("utf-8"), digest_size=4, key=self._key(tenant), person=_PERSON)
        return int.from_bytes(digest.digest(), "big") & _INDEX_MASK

    def _key(self, tenant: str) -> bytes:
        key = self._keys.get(tenant)
        if key is None:
            key = _blake2_key(self._hasher.token_key(tenant))
            with self._lock:
                self._keys[tenant] = key
        return key


def _blake2_key(key: bytes) -> bytes:
    """BLAKE2b takes keys up to 64 bytes; a longer one is compressed with BLAKE2b itself."""
    if not key:
        raise ValueError("the tenant token key is empty")
    if len(key) <= _MAX_KEY:
        return key
    return hashlib.blake2b(key, digest_size=_MAX_KEY, person=b"carnet:key:v1").digest()
