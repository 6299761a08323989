"""``ErasureLedger`` in a file: one JSON line per erasure, appended and fsynced, never rewritten.

A restored backup holds the subjects erased after it was taken; the ledger is how a restore finds
them and erases them again. So it must survive what the backup does not: it lives outside the data
dir (refused inside it) and outside anything ``carnet backup`` captures, by default beside the
wrapped data keys (``<key dir>/erasure-ledger.jsonl``). In production put it on a volume that is not
backed up with the data (the key store's volume, for instance).

A line names the erasure by keyed hashes only (the subject id never reaches this file)::

    {"v": 1, "tenant": "assur-nord", "subject": "<32 hex>", "hash_key": "~tenant-hash-key", "at": "<ISO 8601>"}

``subject`` and ``hash_key`` are ``null`` for a whole tenant (a panic purge).

Appends hold an exclusive ``flock`` (a CLI erasure and the server may append at once). A crash in the
middle of an append can leave a last line without its newline: that append never returned, so its
erasure never started. Readers ignore such a tail and the next append cuts it off first; any other
unreadable line makes reading fail (``LedgerCorrupt``), since a restore must not guess.
"""

from __future__ import annotations

import fcntl
import json
import os
from datetime import datetime
from pathlib import Path

from carnet.errors import DependencyUnavailable, LedgerCorrupt
from carnet.ports import ErasureEntry

_TAIL = 65536  # a line is well under this: a torn tail is always found within it


class FileErasureLedger:
    def __init__(self, path: Path, *, data_dir: Path | None = None) -> None:
        resolved = path.resolve()
        if data_dir is not None and resolved.is_relative_to(data_dir.resolve()):
            raise ValueError("the erasure ledger must not be inside the data dir: a restore would rewind it")
        self._path = resolved

    @property
    def path(self) -> Path:
        return self._path

    def append(self, entry: ErasureEntry) -> None:
        """``write(O_APPEND)`` of one line under ``flock``, then ``fsync``."""
        line = (json.dumps(_doc(entry), sort_keys=True) + "\n").encode()
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(self._path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                _cut_torn_tail(fd, str(self._path))
                os.write(fd, line)
                os.fsync(fd)
            finally:
                os.close(fd)  # releases the lock
        except OSError as exc:
            raise DependencyUnavailable(f"erasure ledger: cannot append to {self._path}: {exc.strerror}") from exc

    def entries(self) -> list[ErasureEntry]:
        try:
            raw = self._path.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise DependencyUnavailable(f"erasure ledger: cannot read {self._path}: {exc.strerror}") from exc
        lines = raw.split(b"\n")[:-1]  # the last piece is empty, or a torn append: ignored
        return [_entry(line, n, str(self._path)) for n, line in enumerate(lines, start=1)]


def _doc(entry: ErasureEntry) -> dict[str, object]:
    if entry.at.tzinfo is None:
        raise ValueError("an erasure time must be timezone-aware")
    return {"v": 1, "tenant": entry.tenant, "subject": entry.subject, "hash_key": entry.hash_key,
            "at": entry.at.isoformat()}


def _entry(line: bytes, n: int, where: str) -> ErasureEntry:
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


def _cut_torn_tail(fd: int, where: str) -> None:
    """Drop a last line left without its newline by a crashed append (called under the lock)."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return
    start = max(0, size - _TAIL)
    cut = os.pread(fd, size - start, start).rfind(b"\n")
    if cut < 0 and start > 0:
        raise LedgerCorrupt(f"erasure ledger {where}: its last line is unreadable")
    os.ftruncate(fd, start + cut + 1)
