"""Idempotency keys: one namespace per kind of request, and a fingerprint of what was asked.

An ``Idempotency-Key`` names one request (IETF httpapi idempotency-key draft). A batch of memories
sent with key ``k`` holds several items, each replayed on its own; a single memory sent with key
``k:1`` is another request. So the key a record id is derived from is never the caller's string
itself but ``request_key(namespace, key, index)``: the JSON array ``[namespace, key]`` for a single
request, ``[namespace, key, index]`` for item ``index`` of a batch. JSON encoding is injective (any
string is escaped, the array's length tells single from batch), so no choice of keys makes two
requests share an id, and no internal key (the worker's ``intake:…``, which never starts with ``[``)
meets a caller's.

The same key with another body is a reuse, refused (422 ``idempotency_key_reused``): each
idempotent write keeps a keyed fingerprint of ``canonical(body)``, compared on replay. The
fingerprint is a keyed hash (see ``SubjectHasher.request_token``): it never lets the body, or a
guessed body, be recognised without the tenant's key.
"""

from __future__ import annotations

import json
from collections.abc import Mapping


def request_key(namespace: str, key: str, index: int | None = None) -> str:
    """The namespaced key: ``["api", "k"]`` for a single request, ``["api", "k", 1]`` for item 1 of a batch."""
    parts: list[str | int] = [namespace, key] if index is None else [namespace, key, index]
    return json.dumps(parts, ensure_ascii=False, separators=(",", ":"))


def canonical(doc: Mapping[str, object]) -> str:
    """One spelling per body: keys sorted, no whitespace, ``None`` fields left out."""
    return json.dumps({k: v for k, v in doc.items() if v is not None}, ensure_ascii=False, sort_keys=True,
                      separators=(",", ":"))
