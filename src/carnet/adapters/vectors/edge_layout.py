"""The embedded store's directories, and which embedding model built the live shard.

::

    <data dir>/vectors/                 the live shard (what serve, backups and restores use)
    <data dir>/vectors/carnet-model.json    {"model_id": ..., "dim": ...} of the vectors inside
    <data dir>/vectors.next/            a shard `carnet reembed` is building (``reembed.incomplete``
                                        inside until it is whole)
    <data dir>/vectors.old-<time>/      the previous shard after a switch, when kept (--keep-old)

The model file travels with the shard (backups copy it, restores bring it back), so a start with
another embedding model than the one that built the vectors is refused: vectors of two models side
by side, or a query embedded by one model against vectors of another, would silently return
nonsense (two models of the same size give no dimension error). A shard made before this file
existed is adopted by its first start.

Switching to a rebuilt shard is two renames (live → ``vectors.old-*``, ``vectors.next`` → live),
made while holding the live shard's owner lock. A crash between them leaves no live shard and a
whole ``vectors.next``: the next start finishes the switch (``open_live``) instead of creating an
empty shard.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from carnet.errors import Conflict
from carnet.fileio import fsync_dir

LIVE = "vectors"
NEXT = "vectors.next"
MODEL_FILE = "carnet-model.json"
INCOMPLETE = "reembed.incomplete"
_ENGINE_CONFIG = "edge_config.json"  # written by the engine: a shard exists in the directory


@dataclass(frozen=True, slots=True)
class ShardModel:
    model_id: str
    dim: int


def read_model(shard: Path) -> ShardModel | None:
    path = shard / MODEL_FILE
    if not path.exists():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    return ShardModel(str(data["model_id"]), int(data["dim"]))


def write_model(shard: Path, model: ShardModel) -> None:
    tmp = shard / (MODEL_FILE + ".tmp")
    with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as f:
        f.write(json.dumps({"model_id": model.model_id, "dim": model.dim}) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, shard / MODEL_FILE)


def open_live(data_dir: Path, *, model_id: str, dim: int | None = None) -> Path:
    """The live shard's path for a process embedding with ``model_id`` (vectors of ``dim`` dimensions,
    when given), after finishing a switch a crash interrupted. ``Conflict`` when the shard was built by
    another model, or holds vectors of another dimension."""
    live, nxt = data_dir / LIVE, data_dir / NEXT
    if not live.exists() and (nxt / _ENGINE_CONFIG).exists() and not (nxt / INCOMPLETE).exists():
        try:
            os.rename(nxt, live)  # the second rename of an interrupted switch
            fsync_dir(data_dir)
        except FileNotFoundError:  # another process finished it first
            pass
    elif not (live / _ENGINE_CONFIG).exists() and (nxt / _ENGINE_CONFIG).exists() \
            and not (nxt / INCOMPLETE).exists():
        raise Conflict(f"{live} holds no shard but {nxt} holds a whole one: an interrupted `carnet reembed`. "
                       f"Move {nxt} to {live} by hand if it is what you want, or remove it.")
    model = read_model(live) if live.exists() else None
    if model is not None and model.model_id != model_id:
        raise Conflict(
            f"the vector store in {live} was built with the embedding model {model.model_id!r}, but the "
            f"settings give {model_id!r}: set CARNET_EMBEDDER (and its path) back, or migrate with "
            "`carnet reembed`")
    if model is not None and dim is not None and model.dim != dim:
        raise Conflict(
            f"the vector store in {live} holds {model.dim}-dimension vectors of {model.model_id!r}, but the "
            f"embedder gives {dim} dimensions: set the dimension back (CARNET_EMBED_SERVER__DIM for a remote "
            "embedder), or migrate with `carnet reembed`")
    return live


def adopt(shard: Path, model: ShardModel) -> None:
    """Record the model of a shard that has no model file yet (new, or made before it existed).
    Call it holding the shard's owner lock."""
    if read_model(shard) is None:
        write_model(shard, model)


def start_build(data_dir: Path) -> Path:
    """A fresh ``vectors.next`` (a leftover one, whole or not, is discarded: the live shard is the
    truth until a switch), marked incomplete."""
    nxt = data_dir / NEXT
    if nxt.exists():
        shutil.rmtree(nxt)
    nxt.mkdir(mode=0o700)
    (nxt / INCOMPLETE).write_text("`carnet reembed` is building this shard\n", encoding="utf-8")
    return nxt


def switch(data_dir: Path, now: datetime) -> Path:
    """Make the (closed, whole) ``vectors.next`` live; returns where the previous shard went.
    The caller holds the live shard's owner lock and has closed both shards."""
    nxt = data_dir / NEXT
    (nxt / INCOMPLETE).unlink()
    fsync_dir(nxt)
    old = data_dir / f"{LIVE}.old-{now.strftime('%Y%m%dT%H%M%SZ')}"
    os.rename(data_dir / LIVE, old)
    try:
        os.rename(nxt, data_dir / LIVE)
    except FileNotFoundError:  # a process starting in between finished the switch (``open_live``)
        if not (data_dir / LIVE / _ENGINE_CONFIG).exists():
            raise
    fsync_dir(data_dir)
    return old
