"""Two stacks on one PostgreSQL control plane and one vector store, as two API processes are (each
with its own caches, pools and sessions): an erasure in one must not leave the other writing the
subject with what it cached before (the destroyed data key, the registration now deleted)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from carnet import bootstrap
from carnet.adapters.qdrant_edge import EdgeVectorIndex
from carnet.services.apikeys import authenticate, create_key
from carnet.services.erase import erase_subject
from carnet.services.remember import NewMemory
from carnet.services.scope import scope_for
from tests.support.shared_index import DIM, HashEmbedder, Hooked
from tests.support.subject_race import settings

TENANT, SUBJECT = "assur-nord", "MBR-caches-1"


@pytest.fixture
def two(tmp_path: Path, postgres_dsn: str,
        monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[bootstrap.Container, bootstrap.Container]]:
    shard = EdgeVectorIndex(tmp_path / "shard", DIM)
    monkeypatch.setattr(bootstrap, "build_index", lambda settings, dim, model_id=None: Hooked(shard))
    made = [bootstrap.build(settings(data_dir=tmp_path / name, key_dir=tmp_path / "keys", dsn=postgres_dsn),
                            embedder=HashEmbedder()) for name in ("api-1", "api-2")]
    try:
        yield made[0], made[1]
    finally:
        for c in made:
            c.close()
        shard.close()


def test_a_subject_erased_elsewhere_is_written_afresh(two: tuple[bootstrap.Container, bootstrap.Container]) -> None:
    writer, eraser = two
    key, _ = create_key(writer.deps.catalog, writer.pepper, tenant=TENANT, roles=["agent"])
    who = authenticate(writer.deps.catalog, writer.pepper, key)
    writer.facade.remember(who, subject_id=SUBJECT, items=[NewMemory("Le membre habite à Lyon.")])
    receipt = erase_subject(eraser.deps, tenant=TENANT, subject_id=SUBJECT)
    assert receipt.complete and receipt.data_key_destroyed
    writer.facade.remember(who, subject_id=SUBJECT, items=[NewMemory("Le membre habite à Brest.")])
    scope = scope_for(eraser.deps, TENANT, SUBJECT)
    assert eraser.deps.catalog.is_registered(scope)  # registered again, not skipped by a stale memory of it
    texts = [m.text for m in eraser.facade.list_memories(who, subject_id=SUBJECT).items]
    assert texts == ["Le membre habite à Brest."]  # sealed under a live key, readable by every process
