"""Copying store files without filling their holes, and making renames durable.

The embedded vector engine preallocates its files sparsely: a 2,000-point shard takes 1.5 MB of disk
for 219 MB of file length. A plain copy, or a plain extraction from an archive, writes every hole as
zeros. These helpers keep holes as holes: a copy reads only the data regions (``SEEK_DATA`` /
``SEEK_HOLE``), a write seeks over blocks of zeros. Files are created 0600 and directories 0700:
what they hold is sealed, but it is still the subjects' data.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import IO, BinaryIO

CHUNK = 1 << 20
_ZEROS = bytes(CHUNK)


def copy_tree_sparse(src: Path, dst: Path, *, skip: Collection[str] = ()) -> list[str]:
    """Copy the directory ``src`` to the new directory ``dst`` (empty directories included), leaving out
    files named in ``skip``; returns the copied files' paths relative to ``dst``, sorted."""
    copied: list[str] = []
    dst.mkdir(mode=0o700)
    for root, dirs, files in os.walk(src):
        here = Path(root)
        target = dst / here.relative_to(src)
        for d in sorted(dirs):
            (target / d).mkdir(mode=0o700)
        for name in sorted(files):
            if name in skip:
                continue
            copy_sparse(here / name, target / name)
            copied.append((target / name).relative_to(dst).as_posix())
    return sorted(copied)


def data_regions(fd: int) -> Iterator[tuple[int, int]]:
    """The ``(start, end)`` byte ranges of the open file ``fd`` that hold data, in order; its holes are
    left out. Each step seeks from an absolute position, so the caller may move the file's offset."""
    size = os.fstat(fd).st_size
    pos = 0
    while pos < size:
        try:
            start = os.lseek(fd, pos, os.SEEK_DATA)
        except OSError:  # ENXIO: nothing but a hole up to the end
            return
        end = os.lseek(fd, start, os.SEEK_HOLE)
        yield start, end
        pos = end


def copy_sparse(src: Path, dst: Path) -> None:
    """Copy one file, reading and writing only its data regions (the rest stays a hole)."""
    with open(src, "rb") as fi, _create(dst) as fo:
        fd = fi.fileno()
        for start, end in data_regions(fd):
            os.lseek(fd, start, os.SEEK_SET)
            fo.seek(start)
            left = end - start
            while left > 0:
                block = os.read(fd, min(left, CHUNK))
                if not block:
                    break
                fo.write(block)
                left -= len(block)
        fo.truncate(os.fstat(fd).st_size)
        fo.flush()
        os.fsync(fo.fileno())


def write_sparse(reader: IO[bytes], dst: Path, *, seen: Callable[[bytes], None]) -> int:
    """Write what ``reader`` yields to the new file ``dst``, seeking over blocks of zeros; every block
    is passed to ``seen`` (a checksum). Returns the number of bytes read."""
    total = 0
    with _create(dst) as fo:
        while block := reader.read(CHUNK):
            seen(block)
            if block == _ZEROS[: len(block)]:
                fo.seek(len(block), os.SEEK_CUR)
            else:
                fo.write(block)
            total += len(block)
        fo.truncate(total)
        fo.flush()
        os.fsync(fo.fileno())
    return total


def fsync_dir(path: Path) -> None:
    """Make the renames and creations inside ``path`` durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _create(path: Path) -> BinaryIO:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    return os.fdopen(fd, "wb")
