"""Two stacks on one PostgreSQL control plane and one vector store, as two API processes are (each
with its own caches, pools and sessions): an erasure in one must not leave the other writing the
subject with what it cached before (the destroyed data key, the registration now deleted), nor
holding the subject's key and pseudonym map in memory for longer than the documented 2 s."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from carnet.adapters.vectors.qdrant_edge import EdgeVectorIndex
from carnet.bootstrap import wiring as bootstrap
from carnet.crypto.pseudonym_store import SealedPseudonymMaps
from carnet.services.apikeys import authenticate, create_key
from carnet.services.memories.remember import NewMemory
from carnet.services.rights.erase import erase_subject
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


def test_an_erasure_elsewhere_empties_this_process_caches_within_seconds(
        two: tuple[bootstrap.Container, bootstrap.Container], postgres_dsn: str) -> None:
    holder, eraser = two
    key, _ = create_key(holder.deps.catalog, holder.pepper, tenant=TENANT, roles=["agent"])
    who = authenticate(holder.deps.catalog, holder.pepper, key)
    holder.facade.remember(who, subject_id=SUBJECT, items=[NewMemory("Son courriel est jean.dupont@example.fr.")])
    scope = scope_for(holder.deps, TENANT, SUBJECT)
    maps = holder.deps.pii.maps
    assert isinstance(maps, SealedPseudonymMaps)
    assert holder.keyring.cached(scope.tenant, scope.subject) and maps.cached(scope)  # the key, the map (the address)

    erase_subject(eraser.deps, tenant=TENANT, subject_id=SUBJECT)  # nothing is asked of the holder
    deadline = time.monotonic() + 2.0  # docs/operations.md, "Key cache across processes"
    while holder.keyring.cached(scope.tenant, scope.subject) or maps.cached(scope):
        assert time.monotonic() < deadline, "the other process still holds the erased subject's key or map"
        time.sleep(0.005)

    with psycopg.connect(postgres_dsn) as db:  # one ledger for both processes, keyed hashes only
        docs = [r[0] for r in db.execute("SELECT doc FROM carnet_erasures.entries").fetchall()]
    assert len(docs) == 1 and scope.subject in docs[0] and SUBJECT not in docs[0]
