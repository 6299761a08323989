"""A record's text never reaches a file in clear: vector store (segments and WAL), catalog, key store."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from carnet.adapters.qdrant_edge import EdgeVectorIndex
from carnet.bootstrap import build
from carnet.config import Settings
from carnet.crypto.sealed_index import SealedIndex
from carnet.domain.records import Kind, Memory, Scope
from carnet.ports import Embedder, IndexedMemory, SparseVector
from carnet.services import memories, recall
from carnet.services.remember import NewMemory, remember

WORDS = (b"Quarteron", "Zéphyrin".encode(), b"Lilas")
TEXT = "Le membre Zéphyrin Quarteron habite rue des Lilas, il rappelle pour son sinistre."


def _files_with_words(*roots: Path) -> list[str]:
    return [str(p) for root in roots for p in root.rglob("*")
            if p.is_file() and any(w in p.read_bytes() for w in WORDS)]


def test_sealed_text_is_nowhere_on_disk_and_reads_back(tmp_path: Path, embedder: Embedder) -> None:
    settings = Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys")
    c = build(settings, embedder=embedder)
    assert isinstance(c.deps.index, SealedIndex)
    out = remember(c.deps, tenant="t", subject_id="S", actor="a",
                   items=[NewMemory(text=TEXT), NewMemory(text="Visite de l'expert prévue.", kind=Kind.EPISODE)])
    c.close()  # the engine flushes its segments and WAL
    assert _files_with_words(settings.data_dir, settings.resolved_key_dir) == []

    c = build(settings, embedder=embedder)
    try:
        got = memories.get_memory(c.deps, tenant="t", subject_id="S", memory_id=out[0].memory.id)
        assert got.text == TEXT
        hits = recall.search(c.deps, tenant="t", subject_id="S", query=recall.Query("Quarteron sinistre", k=1))
        assert hits[0].memory.text == TEXT
    finally:
        c.close()


def test_the_scan_sees_plaintext_written_without_the_seal(tmp_path: Path) -> None:
    """Control: the same text written to the bare store stays readable in its files, so the scan above
    can fail."""
    index = EdgeVectorIndex(tmp_path / "vectors", 4)
    at = datetime(2026, 1, 1, tzinfo=UTC)
    m = Memory(id="6f1c0f4e-3f0b-4a43-9a1d-2d9f4b8a6b11", scope=Scope("t", "s"), kind=Kind.FACT, text=TEXT,
               pseudo_text=TEXT, recorded_at=at, valid_from=at, updated_at=at)
    index.upsert(m.scope, [IndexedMemory(m, np.ones(4, dtype=np.float32) / 2, SparseVector([1], [1.0]))])
    index.close()
    assert _files_with_words(tmp_path)
