"""A stored record that cannot be read back: named by its id and a reason code, never by its content.

One damaged record (a flipped byte of a ciphertext, a payload that no longer decodes) or a damaged
data key (the wrapped key altered, its key-store entry altered, removed or truncated) must never block
a subject's reads, export or erasure. The store adapters and the sealing decorator therefore report
what they could not decode or open as an ``Unreadable`` in the ``skipped`` list a caller hands them,
and return the other records. The services count them (``/metrics``), the facade audits them, and
the answers say how many were left out.

Reason codes (stable, part of the API: export names each unreadable record with one):

    payload_invalid     the stored payload does not decode (a field missing, of the wrong type, a date
                        outside years 1..9999…)
    envelope_invalid    a sealed field does not open: tampered, moved, not sealed, malformed
    key_destroyed       the data key the field names is not in the key store (erased, or altered id)
    key_store_corrupt   the subject's key-store entry cannot be read back
    key_unwrap_failed   the KMS refuses to unwrap the subject's data key (wrapped key altered)
    crypto_error, kms_rejected   other refusals of the crypto layer or the KMS
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeVar

PAYLOAD_INVALID = "payload_invalid"

T = TypeVar("T")

# What a failed decode of one stored payload can raise (a missing key, a wrong type, a date out of range…).
DECODE_ERRORS: tuple[type[Exception], ...] = (LookupError, TypeError, ValueError, ArithmeticError, AttributeError)


@dataclass(frozen=True, slots=True)
class Unreadable:
    id: str
    reason: str


Skipped = list[Unreadable]  # filled by the store for one call; ``None`` where the caller does not ask


def distinct(items: Iterable[Unreadable]) -> tuple[Unreadable, ...]:
    """One entry per record id (the first reason seen), sorted by id: a record skipped by two
    retrievers, or by ranking then by opening, is counted once."""
    seen: dict[str, Unreadable] = {}
    for u in items:
        seen.setdefault(u.id, u)
    return tuple(sorted(seen.values(), key=lambda u: u.id))


def note(skipped: Skipped | None, record_id: str, reason: str) -> None:
    if skipped is not None:
        skipped.append(Unreadable(record_id, reason))


class Found(list[T]):
    """What a read returns (a plain list, so callers of a list go on working), and the records it
    had to leave out because they could not be read."""

    def __init__(self, items: Iterable[T] = (), unreadable: tuple[Unreadable, ...] = ()) -> None:
        super().__init__(items)
        self.unreadable = unreadable
