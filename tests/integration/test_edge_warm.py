"""A real qdrant-edge shard's payload files are read into the page cache when it opens
(``adapters.vectors.edge_warm``): the warm-up finds the engine's own files, and closing the index
while it runs neither hangs nor loses a record."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from carnet.adapters.vectors.edge_warm import payload_files
from carnet.adapters.vectors.qdrant_edge import EdgeVectorIndex
from carnet.domain.records import Kind, Memory, Scope, point_id
from carnet.ports import IndexedMemory, SparseVector

DIM = 8
NOW = datetime(2025, 3, 14, 9, 26, 53, tzinfo=UTC)
SCOPE = Scope(tenant="assur-nord", subject="h-5f1c")


def items(n: int) -> list[IndexedMemory]:
    rng = np.random.default_rng(3)
    out = []
    for i in range(n):
        m = Memory(id=point_id(SCOPE, str(i)), scope=SCOPE, kind=Kind.FACT, text=f"enc:{i}" + "x" * 500,
                   pseudo_text=f"pseudo {i}", recorded_at=NOW, valid_from=NOW, updated_at=NOW)
        v = rng.standard_normal(DIM).astype(np.float32)
        out.append(IndexedMemory(m, v / np.linalg.norm(v), SparseVector([i % 7 + 1], [1.0])))
    return out


def test_the_payload_files_of_a_real_shard_are_read_at_open(tmp_path: Path) -> None:
    path = tmp_path / "vectors"
    first = EdgeVectorIndex(path, DIM)
    first.upsert(SCOPE, items(300))
    first.close()
    pages = [p for p in payload_files(path) if p.name.startswith("page_")]  # the engine's journal files come and go
    assert pages, "the engine's payload files moved: edge_warm.payload_files no longer finds them"
    again = EdgeVectorIndex(path, DIM)
    try:
        assert again.warmer.done.wait(30)
        result = again.warmer.result
        assert result is not None and result.skipped is None
        # the data of 300 records of 500+ characters was read; the engine's preallocated holes were not
        assert 300 * 500 < result.read <= result.planned < sum(p.stat().st_size for p in pages)
    finally:
        again.close()


def test_closing_while_warming_stops_it_and_keeps_every_record(tmp_path: Path) -> None:
    path = tmp_path / "vectors"
    first = EdgeVectorIndex(path, DIM)
    written = items(50)
    first.upsert(SCOPE, written)
    first.close()
    again = EdgeVectorIndex(path, DIM)
    again.close()  # at once: the warm-up is told to stop and waited for
    assert again.warmer.done.is_set()
    last = EdgeVectorIndex(path, DIM)
    try:
        assert [m.id for m in last.get(SCOPE, [i.memory.id for i in written])] == [i.memory.id for i in written]
    finally:
        last.close()
