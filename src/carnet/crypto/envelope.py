"""AES-256-GCM envelopes for single fields.

A blob is self-describing enough to find its key, and nothing more::

    offset   size   field
    0        1      format version (0x01)
    1        1      L, length of the data-key id (1..255)
    2        L      data-key id, ASCII
    2+L      12     nonce, random per seal
    14+L     n      ciphertext (n = plaintext length)
    14+L+n   16     GCM tag

The associated data is never stored: both sides rebuild it from the header (bytes ``0 .. 2+L``)
followed by the ``Aad`` fields, each as a 4-byte big-endian length and its UTF-8 bytes::

    header || len(tenant) tenant || len(subject) subject || len(record_id) record_id || len(field) field

So the format version, the data-key id, the tenant, the subject hash, the record id and the field
name are all authenticated: a blob copied to another record, field, subject or tenant, or given a
different header, fails to open. Lengths make the encoding injective ("ab"+"c" differs from
"a"+"bc"). The nonce is authenticated by GCM itself.

Random 96-bit nonces are safe for 2^32 seals per key; keys are per subject, so that bound is far.
The tenant key's version is not in the blob: it belongs to the wrapped data key, which is why a
KMS rotation and rewrap never touch a record's ciphertext.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from carnet.crypto.errors import EnvelopeError

FORMAT_VERSION = 1
KEY_BYTES = 32
NONCE_BYTES = 12
TAG_BYTES = 16
_MAX_KEY_ID = 255


@dataclass(frozen=True, slots=True)
class Aad:
    """Where a sealed value belongs. ``subject`` is the keyed subject hash, never the subject id."""

    tenant: str
    subject: str
    record_id: str
    field: str

    def __post_init__(self) -> None:
        # An empty field would still be bound, but it is almost surely a wiring bug that weakens binding.
        if not (self.tenant and self.subject and self.record_id and self.field):
            raise ValueError("associated data needs a tenant, a subject, a record id and a field name")


def seal(key: bytes, *, key_id: str, aad: Aad, plaintext: bytes | str) -> bytes:
    """Encrypt ``plaintext`` (str is UTF-8 encoded) under data key ``key`` named ``key_id``."""
    header = _header(key_id)
    data = plaintext.encode() if isinstance(plaintext, str) else plaintext
    nonce = os.urandom(NONCE_BYTES)
    return header + nonce + aead_encrypt(key, nonce, data, header + _encode_aad(aad))


def open_(key: bytes, *, aad: Aad, blob: bytes) -> bytes:
    """Decrypt ``blob`` sealed for ``aad``; raise ``EnvelopeError`` unless everything matches."""
    key_id = header_key_id(blob)
    start = 2 + len(key_id)
    header, nonce = blob[:start], blob[start : start + NONCE_BYTES]
    return aead_decrypt(key, nonce, blob[start + NONCE_BYTES :], header + _encode_aad(aad))


def open_text(key: bytes, *, aad: Aad, blob: bytes) -> str:
    """``open_`` for a field sealed from a ``str``."""
    try:
        return open_(key, aad=aad, blob=blob).decode()
    except UnicodeDecodeError as exc:  # authenticated, so only a caller mixing bytes and text gets here
        raise EnvelopeError("plaintext is not UTF-8") from exc


def header_key_id(blob: bytes) -> str:
    """The data-key id a blob names (unauthenticated until ``open_`` succeeds: use it only to pick a key)."""
    if len(blob) < 2 or blob[0] != FORMAT_VERSION:
        raise EnvelopeError("unknown format version")
    size = blob[1]
    if size == 0 or len(blob) < 2 + size + NONCE_BYTES + TAG_BYTES:
        raise EnvelopeError("truncated")
    raw = blob[2 : 2 + size]
    if not raw.isascii():
        raise EnvelopeError("malformed key id")
    return raw.decode("ascii")


def aead_encrypt(key: bytes, nonce: bytes, plaintext: bytes, associated_data: bytes) -> bytes:
    """Raw AES-256-GCM with a 96-bit nonce: ``ciphertext || tag``. The one place that encrypts."""
    _check(key, nonce)
    return AESGCM(key).encrypt(nonce, plaintext, associated_data)


def aead_decrypt(key: bytes, nonce: bytes, ciphertext_and_tag: bytes, associated_data: bytes) -> bytes:
    """Inverse of ``aead_encrypt``; ``EnvelopeError`` when the tag does not verify."""
    _check(key, nonce)
    if len(ciphertext_and_tag) < TAG_BYTES:
        raise EnvelopeError("truncated")
    try:
        return AESGCM(key).decrypt(nonce, ciphertext_and_tag, associated_data)
    except InvalidTag as exc:
        raise EnvelopeError("authentication failed") from exc


def _check(key: bytes, nonce: bytes) -> None:
    # Programming errors, not data errors: a wrong-sized key or nonce never comes from a stored blob.
    if len(key) != KEY_BYTES:
        raise ValueError("data keys are 256-bit")
    if len(nonce) != NONCE_BYTES:
        raise ValueError("nonces are 96-bit")


def _header(key_id: str) -> bytes:
    raw = key_id.encode("ascii") if key_id.isascii() else b""
    if not 0 < len(raw) <= _MAX_KEY_ID:
        raise ValueError("a data-key id is 1 to 255 ASCII characters")
    return bytes((FORMAT_VERSION, len(raw))) + raw


def _encode_aad(aad: Aad) -> bytes:
    parts = (aad.tenant, aad.subject, aad.record_id, aad.field)
    return b"".join(struct.pack(">I", len(raw)) + raw for raw in (part.encode() for part in parts))
