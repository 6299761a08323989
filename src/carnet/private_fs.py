"""Everything Carnet creates on disk is private to its user: directories 0700, files 0600.

What is in these files is sealed, but it is still the subjects' data (and the audit trail, the key
store, the scheduler's state): nobody else on the host has to read it. Two layers, one rule:

- ``restrict_umask()`` at every entry (the ``carnet`` command, ``bootstrap.build``) adds 077 to the
  process umask, so files created by libraries Carnet does not control (the embedded vector engine's
  segments, SQLite's ``-wal`` and ``-shm``) come out private whoever started the process;
- ``private_dir`` and ``private_file`` are what Carnet's own openers call: they create with those
  modes explicitly, and tighten what an earlier version (or a by-hand run under umask 022) left
  readable by group or others.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

import structlog

log = structlog.get_logger(__name__)

PRIVATE_UMASK = 0o077
DIR_MODE = 0o700
FILE_MODE = 0o600


def restrict_umask() -> None:
    """Add 077 to the process umask (never loosens a stricter one)."""
    current = os.umask(PRIVATE_UMASK)
    os.umask(current | PRIVATE_UMASK)


def private_dir(path: Path) -> Path:
    """``path`` as a directory only its owner can enter (created with its missing parents)."""
    for missing in reversed([p for p in (path, *path.parents) if not p.exists()]):
        missing.mkdir(mode=DIR_MODE, exist_ok=True)  # parents too (``mkdir(parents=True)`` ignores mode for them)
    _tighten(path, DIR_MODE)
    return path


def private_file(path: Path) -> Path:
    """``path`` as a file only its owner can read, created empty if missing (and its directory, private,
    if missing: an existing directory is the caller's choice, left as it is)."""
    if not path.parent.exists():
        private_dir(path.parent)
    # An existing file is never opened here. Closing any descriptor of an SQLite database drops every POSIX
    # lock this process holds on it (SQLite's "how to corrupt" notes, 2.2.1): a second store opened on the
    # catalog's file (the intake queue, the team procedures) left the first connection unlocked, another
    # process closing its own connection (`carnet apikey create` or `revoke` beside `carnet serve`) then
    # checkpointed and deleted the WAL under it, and the server saw no key created or revoked after that
    # (tests/integration/test_sqlite_shared_file.py).
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
    _tighten(path, FILE_MODE)
    return path


def tighten_existing(*paths: Path) -> None:
    """Make files that already exist private (SQLite's ``-wal``/``-shm`` left by an earlier run)."""
    for path in paths:
        if path.exists():
            _tighten(path, FILE_MODE)


def _tighten(path: Path, mode: int) -> None:
    st = path.stat()
    if stat.S_IMODE(st.st_mode) & 0o077 and st.st_uid == os.geteuid():
        os.chmod(path, mode)
        log.warning("file_mode_tightened", kind="dir" if stat.S_ISDIR(st.st_mode) else "file", mode=oct(mode))
