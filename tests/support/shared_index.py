"""A vector store several test processes share, standing in for a Qdrant server (none runs here).

One process owns a qdrant-edge shard and serves its ``VectorIndex`` methods over
``multiprocessing.managers`` (pickled calls on a local TCP socket with an auth key); every other
process gets a proxy. That is what production looks like to the services: one store, many
processes writing to it. ``Hooked`` adds the slow steps the race tests need to make two processes
overlap at a chosen point, and marker files saying when they were reached."""

from __future__ import annotations

import multiprocessing
import secrets
import time
from collections.abc import Callable, Sequence
from multiprocessing.managers import BaseManager
from pathlib import Path
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from carnet.domain.records import Memory, Scope
from carnet.domain.unreadable import Skipped
from carnet.ports import IndexedMemory, RecordFilter, VectorIndex

DIM = 32
_shard: VectorIndex | None = None
_path: Path | None = None


def _open_shard() -> VectorIndex:
    """In the server process: the one shard, opened on first use."""
    global _shard
    if _shard is None:
        from carnet.adapters.vectors.qdrant_edge import EdgeVectorIndex

        assert _path is not None
        _shard = EdgeVectorIndex(_path, DIM)
    return _shard


def _set_path(path: str) -> None:
    global _path
    _path = Path(path)


class IndexManager(BaseManager):
    pass


IndexManager.register("index", callable=_open_shard)
IndexManager.register("set_path", callable=_set_path)


def start_server(path: Path) -> tuple[IndexManager, tuple[str, int], bytes]:
    """The owner process, started with ``spawn`` (no fork of pytest's threads); its address and key."""
    authkey = secrets.token_bytes(16)
    manager = IndexManager(address=("127.0.0.1", 0), authkey=authkey, ctx=multiprocessing.get_context("spawn"))
    manager.start()
    manager.set_path(str(path))  # type: ignore[attr-defined]
    return manager, cast(tuple[str, int], manager.address), authkey


def connect(address: tuple[str, int], authkey: bytes) -> VectorIndex:
    manager = IndexManager(address=address, authkey=authkey)
    manager.connect()
    return cast(VectorIndex, manager.index())  # type: ignore[attr-defined]


class Hooked:
    """Delegates to the shared store; ``close`` leaves it open (the owner closes it). Optionally slow:
    ``slow_upsert`` writes its marker, then waits, before an upsert reaches the store (a worker
    in the middle of applying an intake); ``slow_after_empty_scroll`` waits after a scroll that found
    nothing (an erasure that has deleted the records and goes on to the catalog and the intakes)."""

    def __init__(self, inner: VectorIndex, *, seconds: float = 1.5, slow_upsert: Path | None = None,
                 slow_after_empty_scroll: Path | None = None) -> None:
        self._inner, self._seconds = inner, seconds
        self._slow_upsert, self._slow_scroll = slow_upsert, slow_after_empty_scroll

    def __getattr__(self, name: str) -> Callable[..., Any]:
        return cast(Callable[..., Any], getattr(self._inner, name))

    def upsert(self, scope: Scope, items: Sequence[IndexedMemory]) -> None:
        if self._slow_upsert is not None:
            self._slow_upsert.touch()
            time.sleep(self._seconds)  # the overlap itself, not a wait for readiness
        self._inner.upsert(scope, items)

    def scroll(self, scope: Scope, *, where: RecordFilter, limit: int, offset: str | None = None,
               skipped: Skipped | None = None) -> tuple[list[Memory], str | None]:
        found = self._inner.scroll(scope, where=where, limit=limit, offset=offset, skipped=skipped)
        if self._slow_scroll is not None and not found[0]:
            self._slow_scroll.touch()
            time.sleep(self._seconds)
        return found

    def close(self) -> None:
        pass


class HashEmbedder:
    """A bag of hashed words, 32-dim, the same in every process (no model to load)."""

    model_id = "test/word-hash-32"
    dim = DIM

    def _one(self, text: str) -> npt.NDArray[np.float32]:
        import zlib

        v = np.zeros(self.dim, dtype=np.float32)
        for word in text.lower().replace(".", " ").split():
            v[zlib.crc32(word.encode()) % self.dim] += 1.0
        return cast(npt.NDArray[np.float32], v / (np.linalg.norm(v) or 1.0))

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.stack([self._one(t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return self._one(text)
