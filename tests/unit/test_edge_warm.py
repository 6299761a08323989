"""The embedded shard's payload files read through once at open (``adapters.vectors.edge_warm``):
every byte of every file, nothing when told to stop or when the files would not fit the memory
budget, and never an error out of the warm-up thread."""

from __future__ import annotations

import threading
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from carnet.adapters.vectors import edge_warm
from carnet.adapters.vectors.edge_warm import Warmer, available_memory, payload_files, read_through, warm

MiB = 1 << 20


def shard_with(root: Path, sizes: list[int]) -> Path:
    """A shard directory holding payload files of ``sizes`` bytes in two segments, and other files
    (vectors, a segment's config) that are not payloads."""
    for i, size in enumerate(sizes):
        d = root / "segments" / f"seg-{i % 2}" / "payload_storage"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"page_{i}.dat").write_bytes(bytes([i % 251]) * size)
    (root / "segments" / "seg-0" / "vector_storage-dense").mkdir(parents=True, exist_ok=True)
    (root / "segments" / "seg-0" / "vector_storage-dense" / "chunk_0.mmap").write_bytes(b"v" * 4096)
    (root / "segments" / "seg-0" / "segment.json").write_text("{}")
    return root


@settings(max_examples=25, deadline=None)
@given(sizes=st.lists(st.integers(0, 3 * MiB + 17), max_size=5))
def test_every_byte_of_every_payload_file_is_read(tmp_path_factory, sizes: list[int]) -> None:
    shard = shard_with(tmp_path_factory.mktemp("shard"), sizes)
    files = payload_files(shard)
    assert len(files) == len(sizes)
    assert read_through(files, threading.Event()) == sum(sizes)
    done = warm(shard, threading.Event(), available=lambda: 64 * sum(sizes) + MiB)
    assert (done.planned, done.read, done.skipped) == (sum(sizes), sum(sizes), None)


def test_a_stop_ends_the_read_early_and_a_missing_file_is_passed_over(tmp_path: Path) -> None:
    shard = shard_with(tmp_path, [2 * MiB, MiB])
    files = payload_files(shard)
    stop = threading.Event()
    stop.set()
    assert read_through(files, stop) == 0
    assert read_through([tmp_path / "gone.dat", *files], threading.Event()) == 3 * MiB


def test_holes_are_skipped_not_read_as_zeros(tmp_path: Path) -> None:
    """As the engine preallocates its files: 8 MiB long, 1 MiB of data in the middle."""
    d = tmp_path / "segments" / "seg-0" / "payload_storage"
    d.mkdir(parents=True)
    with (d / "page_0.dat").open("wb") as f:
        f.truncate(8 * MiB)
        f.seek(4 * MiB)
        f.write(b"p" * MiB)
    assert read_through(payload_files(tmp_path), threading.Event()) == MiB
    done = warm(tmp_path, threading.Event(), available=lambda: 1 << 40)
    assert done.read == MiB and MiB <= done.planned < 2 * MiB  # the bytes on disk, not the length


def test_files_over_half_the_available_memory_or_an_unknown_budget_are_not_read(tmp_path: Path) -> None:
    shard = shard_with(tmp_path, [MiB, MiB])
    over = warm(shard, threading.Event(), available=lambda: 4 * MiB - 1)
    assert (over.read, over.skipped) == (0, "larger than half the available memory")
    assert warm(shard, threading.Event(), available=lambda: 4 * MiB).read == 2 * MiB
    unknown = warm(shard, threading.Event(), available=lambda: None)
    assert (unknown.read, unknown.skipped) == (0, "available memory unknown")


def test_available_memory_reads_memavailable_and_says_none_otherwise(tmp_path: Path) -> None:
    info = tmp_path / "meminfo"
    info.write_text("MemTotal:       24684044 kB\nMemFree:  1 kB\nMemAvailable:   23000000 kB\n")
    assert available_memory(info) == 23_000_000 * 1024
    info.write_text("MemTotal: 5 kB\n")
    assert available_memory(info) is None
    info.write_text("MemAvailable: lots\n")
    assert available_memory(info) is None
    assert available_memory(tmp_path / "absent") is None


def test_the_thread_reports_what_it_did_and_a_failure_never_escapes(tmp_path: Path, monkeypatch) -> None:
    shard = shard_with(tmp_path, [MiB])
    w = Warmer(shard, available=lambda: 1 << 40)
    assert w.done.wait(10)
    assert w.result is not None and w.result.read == MiB
    w.stop()

    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(edge_warm, "warm", broken)
    failed = Warmer(shard)
    assert failed.done.wait(10)
    assert failed.result is None  # logged, not raised: the process goes on
    failed.stop()
