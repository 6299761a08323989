"""The service layer on the real embedded stack: serialization, replays, ownership of the shard.

``stack`` runs a test twice: on the embedded stack (``edge``) and with the vector store on the Qdrant
test server (``rest``: ``CARNET_VECTOR_BACKEND=server``, built by ``carnet.bootstrap.wiring`` as in
production, the server adapter over HTTP; tests/support/qdrant_rest), a collection of its own.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from uuid import uuid4

import pytest
from qdrant_client import QdrantClient

from carnet.bootstrap.container import Container
from carnet.bootstrap.wiring import build
from carnet.domain.records import Kind, Status
from carnet.errors import StoreLocked
from carnet.ports import Embedder
from carnet.services.memories import reads as memories
from carnet.services.memories.remember import NewMemory, remember
from carnet.settings.root import Settings
from tests.support.qdrant_rest import RunningQdrant

AT = datetime(2025, 5, 1, tzinfo=UTC)


@pytest.fixture(params=["edge", "rest"])
def stack(request: pytest.FixtureRequest, tmp_path: Path, embedder: Embedder) -> Iterator[Container]:
    if request.param == "edge":
        yield request.getfixturevalue("container")
        return
    qdrant: RunningQdrant = request.getfixturevalue("qdrant_rest")
    collection = f"services-{uuid4().hex}"
    settings = Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys", vector_backend="server",
                        qdrant={"url": qdrant.url, "collection": collection})
    c = build(settings, embedder=embedder)
    client = QdrantClient(url=qdrant.url, check_compatibility=False)
    try:
        yield c
        assert client.count(collection).count > 0  # the records went to the server
    finally:
        c.close()
        client.delete_collection(collection)
        client.close()


def _active(c: Container, subject: str) -> list[str]:
    return [m.text for m in memories.list_memories(c.deps, tenant="t", subject_id=subject, limit=500).items]


def test_concurrent_writes_for_one_subject_are_serialized(stack: Container) -> None:
    """Eight threads tell the same new address at once: exactly one record is created, the rest merge."""
    remember(stack.deps, tenant="t", subject_id="S1", actor="a",
             items=[NewMemory(text="Le membre habite à Lyon 7e.", occurred_at=AT)])
    errors: list[BaseException] = []

    def tell(n: int) -> None:
        try:
            remember(stack.deps, tenant="t", subject_id="S1", actor=f"a{n}",
                     items=[NewMemory(text="Le membre habite maintenant à Villeurbanne.",
                                      idempotency_key=f"call-{n}", occurred_at=AT + timedelta(days=30))])
        except BaseException as exc:  # collected and re-raised below
            errors.append(exc)

    threads = [threading.Thread(target=tell, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    active = _active(stack, "S1")
    assert active == ["Le membre habite maintenant à Villeurbanne."]
    record = memories.list_memories(stack.deps, tenant="t", subject_id="S1").items[0]
    assert record.reinforcement_count == 7


def test_replayed_batch_changes_nothing(stack: Container) -> None:
    items = [NewMemory(text="Le membre a un contrat auto formule Tiers.", idempotency_key="k1"),
             NewMemory(text="Le membre a un contrat auto Tiers.", idempotency_key="k2")]
    first = remember(stack.deps, tenant="t", subject_id="S2", items=items, actor="a")
    assert [o.action for o in first] == ["created", "merged"]
    again = remember(stack.deps, tenant="t", subject_id="S2", items=items, actor="a")
    assert [o.action for o in again] == ["unchanged", "unchanged"]
    assert again[1].memory.reinforcement_count == 1


def test_context_never_makes_neighbours_duplicates(stack: Container) -> None:
    """A record embedded with its preceding turn must not be merged into that turn by cosine."""
    prev = "Caroline: I went to a support group yesterday."
    items = [NewMemory(text=prev, kind=Kind.EPISODE, idempotency_key="d1"),
             NewMemory(text="Melanie: That's great, how did it feel?", kind=Kind.EPISODE, idempotency_key="d2",
                       context=prev)]
    out = remember(stack.deps, tenant="t", subject_id="S3", items=items, actor="a")
    assert [o.action for o in out] == ["created", "created"]


def test_superseded_record_keeps_its_history(stack: Container) -> None:
    old = remember(stack.deps, tenant="t", subject_id="S4", actor="a",
                   items=[NewMemory(text="Budget max 600 euros pour l'assurance auto.", occurred_at=AT)])[0]
    new = remember(stack.deps, tenant="t", subject_id="S4", actor="a",
                   items=[NewMemory(text="Budget max 750 euros pour l'assurance auto.")])[0]
    assert new.action == "superseded" and new.superseded == (old.memory.id,)
    stored = memories.get_memory(stack.deps, tenant="t", subject_id="S4", memory_id=old.memory.id)
    assert stored.status is Status.SUPERSEDED and stored.superseded_by == new.memory.id
    assert stored.valid_to is not None
    history = memories.memory_history(stack.deps, tenant="t", subject_id="S4", memory_id=old.memory.id)
    assert [h.action for h in history] == ["created", "superseded"]
    # history keeps metadata (ids, rule names), never the text (ids are hex: look for words, not digits)
    assert all(w not in str(h.detail) for h in history for w in ("Budget", "euros", "assurance"))


def test_the_shard_has_one_owner(container: Container, tmp_path: Path, embedder: Embedder) -> None:
    settings = container.settings
    with pytest.raises(StoreLocked, match="held by another process"):
        build(Settings(data_dir=settings.data_dir, key_dir=settings.resolved_key_dir), embedder=embedder)


def test_lookup_by_identifier_goes_through_the_blind_index(stack: Container) -> None:
    from carnet.errors import InvalidInput

    remember(stack.deps, tenant="t", subject_id="L1", actor="a", items=[
        NewMemory(text="Le membre conteste le dossier RC-2026-1184 (dégât des eaux)."),
        NewMemory(text="L'expert a validé le dossier RC-2026-1184 ; indemnisation prévue."),
        NewMemory(text="Le membre préfère être appelé le matin."),
    ])
    remember(stack.deps, tenant="t", subject_id="L2", actor="a",
             items=[NewMemory(text="Dossier RC-2026-1184 ouvert pour un autre membre.")])
    found = memories.lookup(stack.deps, tenant="t", subject_id="L1", identifier="RC 2026 1184")
    assert sorted(m.text for m in found) == [
        "L'expert a validé le dossier RC-2026-1184 ; indemnisation prévue.",
        "Le membre conteste le dossier RC-2026-1184 (dégât des eaux).",
    ]
    assert memories.lookup(stack.deps, tenant="t", subject_id="L1", identifier="RC-2026-1185") == []
    other = memories.lookup(stack.deps, tenant="t", subject_id="L2", identifier="RC-2026-1184")
    assert [m.text for m in other] == ["Dossier RC-2026-1184 ouvert pour un autre membre."]
    for bad in ("", " -/ ", "X" * 129):
        with pytest.raises(InvalidInput):
            memories.lookup(stack.deps, tenant="t", subject_id="L1", identifier=bad)


def test_a_special_category_shortens_retention_per_tenant_policy(tmp_path: Path, embedder: Embedder) -> None:
    settings = Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys",
                        special_categories={"*": {"retention_days": {"health": 30}}})
    c = build(settings, embedder=embedder)
    try:
        out = remember(c.deps, tenant="t", subject_id="R1", actor="a", items=[
            NewMemory(text="Le membre est hospitalisé depuis lundi.", occurred_at=AT),
            NewMemory(text="Le membre préfère être appelé le matin.", occurred_at=AT)])
        assert out[0].memory.special == ("health",)
        assert out[0].memory.expires_at is not None and (out[0].memory.expires_at - AT).days == 30
        assert out[1].memory.special == () and out[1].memory.expires_at is None
    finally:
        c.close()
