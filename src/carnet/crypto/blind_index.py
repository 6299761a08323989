"""Blind indexes: exact lookup of an identifier without decrypting anything.

An identifier (a claim reference, later an IBAN or a phone number) is normalised, then hashed with
HMAC-SHA256 under the tenant's blind-index key and truncated to 64 bits. The token is stored in the
record's clear payload and indexed; looking a record up by the identifier means computing the same
token. Without the tenant's key a token says nothing about the identifier (and a tenant shred
destroys that key). Truncation keeps tokens short; a collision (about one in 2^32 after 2^32
identifiers in one subject) only brings up an extra record, never hides one.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import unicodedata
from collections.abc import Iterable

TOKEN_HEX = 16  # 64 bits
_SEPARATORS = re.compile(r"[\s\-./_]+")


def normalize_identifier(value: str) -> str:
    """One spelling per identifier: compatibility form, upper case, separators and spaces dropped
    ("rc-2026 1184", "RC-2026-1184" and "RC 2026.1184" are the same reference)."""
    return _SEPARATORS.sub("", unicodedata.normalize("NFKC", value)).upper()


def blind_token(key: bytes, value: str) -> str:
    normalized = normalize_identifier(value)
    if not normalized:
        raise ValueError("an empty identifier has no blind-index token")
    return hmac.new(key, b"v1:" + normalized.encode(), hashlib.sha256).hexdigest()[:TOKEN_HEX]


def blind_tokens(key: bytes, values: Iterable[str]) -> tuple[str, ...]:
    """Sorted and without repeats, so a record's tokens do not depend on the order of its text."""
    return tuple(sorted({blind_token(key, v) for v in values if normalize_identifier(v)}))
