"""The embedded shard's payload files read once into the page cache when the shard opens.

qdrant-edge keeps a record's payload in memory-mapped files left "cold": not read at load, and the
engine drops them from the page cache when it closes the shard. Every process start therefore
begins with an empty cache for them, and each request reads the payload pages of its candidates
from disk, one 4 KiB page fault at a time. On the 1M-memory store (1 GiB of payload files) that was
60 to 120 major faults per assemble for minutes after a start, about 4 ms a request more than warm
(docs/benchmarks.md, "Payload files warmed at open"). Reading the files once, in order, in a
background thread takes 0.4 s for that gigabyte on a quiet machine (2 s beside a starting process)
and leaves the pages to the kernel: they are evictable cache, not process memory, so RAM pressure only
makes later reads slower again.

Files larger together than half of the memory the kernel reports available are not read (they
would evict one another, and other processes' cache, without making requests faster)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import structlog

from carnet.fileio import data_regions

log = structlog.get_logger("carnet.vectors")

CHUNK = 1 << 20  # bytes per read
SHARE_OF_AVAILABLE = 0.5  # at most this share of MemAvailable is read into the cache


@dataclass(frozen=True, slots=True)
class Warmed:
    """What a warm-up did: ``read`` bytes of the ``planned`` ones (the files' bytes on disk);
    ``skipped``: why it read nothing, if so."""

    planned: int
    read: int
    seconds: float
    skipped: str | None = None


def payload_files(shard: Path) -> list[Path]:
    """The shard's payload storage files (every segment's ``payload_storage``), in name order."""
    return sorted(p for p in shard.glob("segments/*/payload_storage/*") if p.is_file())


def available_memory(meminfo: Path = Path("/proc/meminfo")) -> int | None:
    """``MemAvailable`` in bytes, or ``None`` where the kernel does not say (not Linux, no /proc)."""
    try:
        for line in meminfo.read_text(encoding="ascii", errors="replace").splitlines():
            name, _, value = line.partition(":")
            if name == "MemAvailable":
                return int(value.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def allocated(path: Path) -> int:
    """The bytes of ``path`` on disk: the engine preallocates its files sparsely (a new shard's payload
    file is 32 MiB long and holds a few KiB), and only data is read."""
    st = path.stat()
    return min(st.st_size, st.st_blocks * 512)


def read_through(files: Sequence[Path], stop: threading.Event) -> int:
    """Read the data regions of every file, in order (the bytes are dropped; holes are skipped, not
    read as zeros); returns the bytes read. Stops early when ``stop`` is set; a file that cannot be
    read (gone, no permission) is passed over."""
    view = memoryview(bytearray(CHUNK))
    done = 0
    for path in files:
        try:
            with path.open("rb", buffering=0) as f:
                for start, end in data_regions(f.fileno()):
                    f.seek(start)
                    while start < end and not stop.is_set():
                        n = f.readinto(view[: min(CHUNK, end - start)])
                        if not n:
                            break
                        start += n
                        done += n
                    if stop.is_set():
                        break
        except OSError:
            continue
        if stop.is_set():
            break
    return done


def warm(shard: Path, stop: threading.Event, *,
         available: Callable[[], int | None] = available_memory) -> Warmed:
    """Read the shard's payload files into the page cache unless they do not fit the memory budget."""
    started = time.perf_counter()
    files = payload_files(shard)
    planned = 0
    for p in files:
        try:
            planned += allocated(p)
        except OSError:
            continue
    free = available()
    if free is None:
        return Warmed(planned, 0, 0.0, skipped="available memory unknown")
    if planned > SHARE_OF_AVAILABLE * free:
        return Warmed(planned, 0, 0.0, skipped="larger than half the available memory")
    read = read_through(files, stop)
    return Warmed(planned, read, round(time.perf_counter() - started, 3))


class Warmer:
    """``warm`` in a daemon thread started at once; ``stop()`` ends it early and waits for it."""

    def __init__(self, shard: Path, *, available: Callable[[], int | None] = available_memory) -> None:
        self._stop = threading.Event()
        self.done = threading.Event()
        self.result: Warmed | None = None
        self._thread = threading.Thread(target=self._run, args=(shard, available), name="carnet-shard-warm",
                                        daemon=True)
        self._thread.start()

    def _run(self, shard: Path, available: Callable[[], int | None]) -> None:
        try:
            self.result = warm(shard, self._stop, available=available)
            r = self.result
            if r.skipped:
                log.info("vector_store_warm_skipped", reason=r.skipped, payload_bytes=r.planned)
            else:
                log.info("vector_store_warmed", payload_bytes=r.read, seconds=r.seconds)
        except Exception as exc:  # a warm-up is an optimisation: it never takes the process down
            log.warning("vector_store_warm_failed", error=type(exc).__name__)
        finally:
            self.done.set()

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        self._thread.join(timeout)
