"""A real qdrant-edge shard searches in the calling thread (``edge_engine.SEARCH_THREADS``): the engine's
search pool has one thread, not one per CPU, for a new shard and for one made with the engine's defaults
(its persisted configuration is overridden at load). The engine names its pool's threads ``edge-search-N``;
a shard opened with the engine's defaults shows several of them here, so the name is still the right one."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from carnet.adapters.vectors.qdrant_edge import EdgeVectorIndex
from carnet.domain.records import Kind, Memory, Scope, point_id
from carnet.ports import IndexedMemory, RecordFilter, SparseVector

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="threads read from /proc")

DIM = 8
NOW = datetime(2025, 3, 14, 9, 26, 53, tzinfo=UTC)
SCOPE = Scope(tenant="assur-nord", subject="h-5f1c")


def search_threads() -> set[str]:
    """The ids of this process's threads the engine named ``edge-search-*``."""
    out = set()
    for task in Path("/proc/self/task").iterdir():
        try:
            if task.joinpath("comm").read_text().startswith("edge-search"):
                out.add(task.name)
        except OSError:  # a thread that ended meanwhile
            continue
    return out


def items(n: int) -> list[IndexedMemory]:
    rng = np.random.default_rng(5)
    out = []
    for i in range(n):
        m = Memory(id=point_id(SCOPE, str(i)), scope=SCOPE, kind=Kind.FACT, text=f"enc:{i}", pseudo_text=f"p {i}",
                   recorded_at=NOW, valid_from=NOW, updated_at=NOW)
        v = rng.standard_normal(DIM).astype(np.float32)
        out.append(IndexedMemory(m, v / np.linalg.norm(v), SparseVector([i % 5 + 1], [1.0])))
    return out


def searched(index: EdgeVectorIndex) -> int:
    hits = index.hybrid_search(SCOPE, dense=items(1)[0].dense, sparse=SparseVector([1], [1.0]), limit=5,
                               where=RecordFilter())
    return len(hits.dense)


def test_a_new_shard_searches_with_one_thread(tmp_path: Path) -> None:
    before = search_threads()
    index = EdgeVectorIndex(tmp_path / "vectors", DIM)
    try:
        index.upsert(SCOPE, items(40))
        assert searched(index) == 5
        assert len(search_threads() - before) <= 1
    finally:
        index.close()


_DEFAULTS_THEN_OURS = """
import sys
from pathlib import Path
from qdrant_edge import EdgeShard
from carnet.adapters.vectors.edge_engine import config
from carnet.adapters.vectors.qdrant_edge import EdgeVectorIndex
sys.path.insert(0, sys.argv[2])
from test_edge_search_threads import DIM, SCOPE, items, search_threads, searched
path = Path(sys.argv[1])
path.mkdir()
c = config(DIM)
before = search_threads()
shard = EdgeShard.create(str(path), type(c)(vectors=c.vectors, sparse_vectors=c.sparse_vectors,
                                            hnsw_config=c.hnsw_config, optimizers=c.optimizers))
import time
deadline = time.monotonic() + 10  # the engine starts its pool's threads on its own: on a busy machine, later
while len(search_threads() - before) <= 1 and time.monotonic() < deadline:
    time.sleep(0.05)
default = len(search_threads() - before)
shard.close()
before = search_threads()
index = EdgeVectorIndex(path, DIM)
index.upsert(SCOPE, items(40))
found = searched(index)
ours = len(search_threads() - before)
index.close()
print(default, found, ours)
"""


def test_a_shard_made_with_the_engine_defaults_is_opened_with_one_thread(tmp_path: Path) -> None:
    """In a process of its own: which pool a shard gets may depend on the shards opened before in the process."""
    run = subprocess.run([sys.executable, "-c", _DEFAULTS_THEN_OURS, str(tmp_path / "vectors"),
                          str(Path(__file__).parent)], capture_output=True, text=True, timeout=120, check=True)
    default, found, ours = (int(x) for x in run.stdout.splitlines()[-1].split())
    assert default > 1, "the engine's default pool: named edge-search-N, several"
    assert found == 5
    assert ours <= 1
