"""``ErasureLedger`` in a file: one JSON line per erasure, appended and fsynced, never rewritten.

A restored backup holds the subjects erased after it was taken; the ledger is how a restore finds
them and erases them again. So it must survive what the backup does not: it lives outside the data
dir (refused inside it) and outside anything ``carnet backup`` captures, by default beside the
wrapped data keys (``<key dir>/erasure-ledger.jsonl``). In production put it on a volume that is not
backed up with the data (the key store's volume, for instance).

A line names the erasure by keyed hashes only (the subject id never reaches this file): its format is
``adapters/local/erasure_line.py``'s. With the PostgreSQL control plane the ledger is a table instead
(``adapters/postgres/erasure_ledger.py``), which takes over an existing file once (``hand_over``).

Appends hold an exclusive ``flock`` (a CLI erasure and the server may append at once). A crash in the
middle of an append can leave a last line without its newline: that append never returned, so its
erasure never started. Readers ignore such a tail and the next append cuts it off first; any other
unreadable line makes reading fail (``LedgerCorrupt``), since a restore must not guess.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from carnet.adapters.local.erasure_line import decode, encode
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
        line = (encode(entry) + "\n").encode()
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = self._locked()
            try:
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
        return _decoded(raw, str(self._path))

    def hand_over(self, receive: Callable[[list[ErasureEntry]], None]) -> Path | None:
        """Give every entry to ``receive`` (another ledger taking over), then rename the file to
        ``<name>.imported-<UTC time>`` so it is handed over once; ``None`` when there is no file.
        Under the lock: an append waiting meanwhile goes to a new file at the old name (``_locked``),
        handed over next time. If ``receive`` raises, the file stays as it was."""
        if not self._path.exists():
            return None
        try:
            fd = self._locked(create=False)
        except FileNotFoundError:
            return None
        try:
            size = os.fstat(fd).st_size
            receive(_decoded(os.pread(fd, size, 0), str(self._path)))
            kept = self._path.with_name(f"{self._path.name}.imported-{datetime.now(UTC):%Y%m%dT%H%M%S%fZ}")
            os.rename(self._path, kept)
            return kept
        finally:
            os.close(fd)

    def close(self) -> None:
        """Nothing stays open between calls."""

    def _locked(self, *, create: bool = True) -> int:
        """The file, open and ``flock``-ed: if it was renamed away while we waited for the lock
        (``hand_over``), the one now at the path instead."""
        while True:
            fd = os.open(self._path, os.O_RDWR | os.O_APPEND | (os.O_CREAT if create else 0), 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                if os.stat(self._path).st_ino == os.fstat(fd).st_ino:
                    return fd
            except FileNotFoundError:
                if not create:
                    os.close(fd)
                    raise
            os.close(fd)


def _decoded(raw: bytes, where: str) -> list[ErasureEntry]:
    lines = raw.split(b"\n")[:-1]  # the last piece is empty, or a torn append: ignored
    return [decode(line, n, where) for n, line in enumerate(lines, start=1)]


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
