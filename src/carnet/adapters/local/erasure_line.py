"""One erasure as a line of text, the same in every ledger (the file's JSON lines, PostgreSQL's rows)::

    {"at": "<ISO 8601>", "hash_key": "~tenant-hash-key", "subject": "<32 hex>", "tenant": "assur-nord", "v": 1}

Keyed hashes only: the subject id never reaches a ledger. ``subject`` and ``hash_key`` are ``null``
for a whole tenant (a panic purge). A line that does not decode is never guessed: ``LedgerCorrupt``."""

from __future__ import annotations

import json
from datetime import datetime

from carnet.errors import LedgerCorrupt
from carnet.ports import ErasureEntry


def encode(entry: ErasureEntry) -> str:
    """Canonical (sorted keys), so one erasure is always the same text: an import can skip what is there."""
    if entry.at.tzinfo is None:
        raise ValueError("an erasure time must be timezone-aware")
    return json.dumps({"v": 1, "tenant": entry.tenant, "subject": entry.subject, "hash_key": entry.hash_key,
                       "at": entry.at.isoformat()}, sort_keys=True)


def decode(line: str | bytes, n: int, where: str) -> ErasureEntry:
    """``line`` back into its entry; ``n`` and ``where`` name it in the error (line number, ledger)."""
    try:
        doc = json.loads(line)
        if doc["v"] != 1:
            raise ValueError("unknown version")
        at = datetime.fromisoformat(doc["at"])
        tenant, subject, hash_key = doc["tenant"], doc["subject"], doc["hash_key"]
        if not isinstance(tenant, str) or not all(v is None or isinstance(v, str) for v in (subject, hash_key)):
            raise ValueError("bad field type")
        if at.tzinfo is None:
            raise ValueError("naive time")
    except (ValueError, KeyError, TypeError) as exc:
        raise LedgerCorrupt(f"erasure ledger {where}: line {n} is unreadable", line=n) from exc
    return ErasureEntry(tenant=tenant, subject=subject, hash_key=hash_key, at=at)
