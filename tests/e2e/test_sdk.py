"""The Python SDK (``clients/python``) against the real app on a real socket: every method, its typed
result, and each error family raised from a real server answer."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from carnet_client import (
    AsyncCarnetClient,
    Budgets,
    CarnetClient,
    CarnetError,
    Context,
    Forbidden,
    InvalidBudget,
    InvalidInput,
    InvalidRequest,
    Memory,
    MemoryNotFound,
    MethodNotAllowed,
    NewMemory,
    PayloadTooLarge,
    RateLimited,
    Retry,
    SubjectNotFound,
    TransportError,
    Unauthenticated,
)
from carnet_client._call import Call, nothing

from carnet.bootstrap.container import Container
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.server import free_port, running
from carnet.services.apikeys import create_key

TENANT = "assur-nord"
S = "ADH-0042"
LYON = "Le membre habite à Lyon 7e."
VILLEURBANNE = "Le membre habite maintenant à Villeurbanne."


def _key(container: Container, *roles: str, rate_limit: str | None = None) -> str:
    key, _ = create_key(container.deps.catalog, container.pepper, tenant=TENANT, roles=list(roles),
                        rate_limit=rate_limit)
    return key


@pytest.fixture
def server(container: Container) -> Iterator[str]:
    with running(create_app(container)) as base:
        yield base


@pytest.fixture
def carnet(server: str, container: Container) -> Iterator[CarnetClient]:
    with CarnetClient(server, _key(container, "agent", "dpo"), timeout=30) as client:
        yield client


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def test_memories_from_remember_to_forget(carnet: CarnetClient) -> None:
    assert carnet.health() is True
    ready = carnet.readiness()
    assert ready.ready and set(ready.checks.values()) == {"ok"}

    first = carnet.remember(S, LYON, occurred_at=_at("2024-01-15T10:00:00+01:00"), importance=0.8,
                            category="adresse", tags=["domicile"], idempotency_key="call-1-turn-1")
    assert first.action == "created" and isinstance(first.memory, Memory)
    assert first.memory.text == LYON and first.memory.tags == ("domicile",) and first.memory.importance == 0.8
    assert first.memory.occurred_at == _at("2024-01-15T10:00:00+01:00") and first.memory.recorded_at.tzinfo
    replay = carnet.remember(S, LYON, occurred_at=_at("2024-01-15T10:00:00+01:00"), importance=0.8,
                             category="adresse", tags=["domicile"], idempotency_key="call-1-turn-1")  # same body
    assert replay.action == "unchanged" and replay.memory.id == first.memory.id

    batch = carnet.remember_batch(S, [
        NewMemory("Le membre préfère être contacté par email.", occurred_at=_at("2024-01-15T10:01:00+01:00")),
        NewMemory("Le membre a appelé pour un sinistre bris de glace.", kind="episode", session_id="call-2"),
    ])
    assert [o.action for o in batch.results] == ["created", "created"]
    assert batch.created == tuple(o.memory.id for o in batch.results) and batch.results[1].memory.kind == "episode"

    moved = carnet.remember(S, VILLEURBANNE, occurred_at=_at("2024-06-10T14:00:00+02:00"))
    assert moved.action == "superseded" and moved.superseded == (first.memory.id,)

    page = carnet.list_memories(S, limit=1)
    assert len(page.items) == 1 and page.next_cursor is not None
    everything = list(carnet.iter_memories(S, page_size=1))
    assert {m.id for m in everything} == {m.id for m in carnet.list_memories(S, limit=500).items}
    assert len(everything) == 3
    assert [m.id for m in carnet.list_memories(S, status="superseded").items] == [first.memory.id]
    assert [m.kind for m in carnet.iter_memories(S, kind="episode")] == ["episode"]

    old = carnet.get_memory(S, first.memory.id)
    assert old.status == "superseded" and old.superseded_by == moved.memory.id and old.valid_to is not None

    hits = carnet.search(S, "Où habite le membre ?", k=3)
    assert hits[0].memory.text == VILLEURBANNE and isinstance(hits[0].score, float)
    assert set(hits[0].signals) >= {"cosine", "relevance", "recency"}
    assert all(h.memory.id != first.memory.id for h in hits)
    assert carnet.search(S, "adresse", include_superseded=True, k=10, kinds=["fact"])

    context = carnet.assemble(S, "adresse du membre", budgets=Budgets(max_memories=3))
    assert isinstance(context, Context) and "Villeurbanne" in context.prompt and "Lyon" not in context.prompt
    assert context.stats["count"] >= 1 and VILLEURBANNE in {r.memory.text for r in context.memories}

    history = carnet.history(S, first.memory.id)
    assert [h.action for h in history] == ["created", "superseded"] and history[0].at.tzinfo is not None

    email = batch.results[0].memory.id
    fixed = carnet.rectify(S, email, category="contact", tags=["email"])
    assert fixed.category == "contact" and fixed.tags == ("email",) and fixed.text == batch.results[0].memory.text
    assert len(carnet.history(S, email)) == 2

    assert carnet.forget(S, email) is None
    with pytest.raises(MemoryNotFound) as gone:
        carnet.get_memory(S, email)
    assert gone.value.memory_id == email and gone.value.status == 404


def test_lookup_by_identifier(carnet: CarnetClient) -> None:
    claim = carnet.remember(S, "Le membre conteste le dossier RC-2031-0007 (bris de glace).")
    carnet.remember(S, "Le membre préfère être appelé le matin.")
    found = carnet.lookup(S, "rc 2031 0007", limit=5, include_superseded=False)
    assert [m.id for m in found] == [claim.memory.id]


def test_export_and_erasure(carnet: CarnetClient, tmp_path: Path) -> None:
    carnet.remember(S, LYON, occurred_at=_at("2024-01-15T10:00:00+01:00"))
    carnet.remember(S, "Le membre a un contrat habitation formule Confort.")

    document = carnet.export(S)
    assert document.format == "carnet.export.v1" and document.subject_id == S and document.count == 2
    assert {r.memory.text for r in document.records} >= {LYON} and document.records[0].history[0].action == "created"
    assert document.exported_at.tzinfo is not None

    path = tmp_path / "export.json"
    written = carnet.export_to(S, path)
    assert written == path.stat().st_size and json.loads(path.read_text())["count"] == 2
    buffer = io.BytesIO()
    assert carnet.export_to(S, buffer) > 0 and json.loads(buffer.getvalue())["subject_id"] == S

    receipt = carnet.erase_subject(S)
    assert receipt.complete and receipt.records_deleted == 2 and receipt.data_key_destroyed
    assert receipt.tenant == TENANT and S not in receipt.subject_hash and all(receipt.verified.values())
    with pytest.raises(SubjectNotFound):
        carnet.export(S)
    missing = tmp_path / "missing.json"
    with pytest.raises(SubjectNotFound):
        carnet.export_to(S, missing)
    assert not missing.exists()


def test_api_keys_and_audit(server: str, container: Container) -> None:
    with CarnetClient(server, _key(container, "admin")) as admin:
        created = admin.create_api_key(roles=["agent"], name="ivr-bot", rate_limit="50/second")
        assert created.key.startswith("crn_") and created.key not in repr(created)
        assert created.info.roles == ("agent",) and created.info.tenant == TENANT and not created.info.revoked
        assert created.info.key_id in {k.key_id for k in admin.list_api_keys()}

        with CarnetClient(server, created.key) as bot:
            assert bot.remember(S, LYON).action == "created"
            assert admin.revoke_api_key(created.info.key_id) is None
            with pytest.raises(Unauthenticated):
                bot.remember(S, LYON)
        assert [k.revoked for k in admin.list_api_keys() if k.key_id == created.info.key_id] == [True]

        entries = admin.audit()
        assert {"apikey.create", "memory.write", "apikey.revoke"} <= {e.action for e in entries}
        assert [e.seq for e in entries] == list(range(1, len(entries) + 1))
        later = list(admin.iter_audit(after_seq=1, limit=2))
        assert [e.seq for e in later] == [2, 3] and later[0].at.tzinfo is not None
        verdict = admin.verify_audit()
        assert verdict.ok and verdict.problems == () and verdict.entries >= len(entries)


def test_error_families_from_real_answers(server: str, container: Container, carnet: CarnetClient) -> None:
    with CarnetClient(server, "crn_000000000000_" + "x" * 30) as stranger, pytest.raises(Unauthenticated) as e401:
        stranger.search(S, "adresse")
    assert e401.value.status == 401 and e401.value.code == "unauthenticated"

    with CarnetClient(server, _key(container, "agent")) as agent:
        with pytest.raises(Forbidden) as e403:
            agent.verify_audit()
        assert e403.value.status == 403 and "dpo" in e403.value.message

    with pytest.raises(SubjectNotFound) as e404:
        carnet.search("NOBODY", "adresse")
    assert "NOBODY" not in str(e404.value)
    carnet.remember(S, LYON)
    with pytest.raises(MemoryNotFound):
        carnet.get_memory(S, "6f1c0f4e-3f0b-4a43-9a1d-2d9f4b8a6b11")

    with pytest.raises(InvalidRequest) as e400:
        carnet.remember(S, "Le membre a un chat.", importance=2)
    assert e400.value.status == 400 and any("importance" in f["loc"] for f in e400.value.fields)
    with pytest.raises(InvalidInput) as batch:
        carnet.remember_batch(S, [NewMemory("Le membre a un chat."), NewMemory("   ")])
    assert batch.value.index == 1
    with pytest.raises(InvalidBudget):
        carnet.assemble(S, "adresse", budgets=Budgets(max_memories=0))
    with pytest.raises(PayloadTooLarge) as e413:
        carnet.remember(S, "x" * (6 * 1024 * 1024))
    assert e413.value.status == 413
    with pytest.raises(MethodNotAllowed):
        carnet._run(Call("PUT", "/healthz", nothing))

    with pytest.raises(ValueError, match="timezone"):
        carnet.remember(S, LYON, occurred_at=datetime(2024, 1, 1))
    with pytest.raises(ValueError, match="subject_id"):
        carnet.get_memory("..", "6f1c0f4e-3f0b-4a43-9a1d-2d9f4b8a6b11")


def test_rate_limit_raises_or_is_waited_out(server: str, container: Container) -> None:
    key = _key(container, "agent", rate_limit="2/minute")  # a minute: however slow this machine, the 3rd is over
    with CarnetClient(server, key) as hurried:
        with pytest.raises(RateLimited) as e429:
            for _ in range(3):
                hurried.remember(S, LYON)
        assert e429.value.status == 429 and e429.value.retry_after is not None and e429.value.retry_after >= 1
    with CarnetClient(server, key, retry=Retry(attempts=1, max_wait=0.1)) as impatient, pytest.raises(RateLimited):
        for _ in range(3):  # the wait asked for (>= 1 s) is over max_wait: raised at once
            impatient.remember(S, LYON)
    quick = _key(container, "agent", rate_limit="2/second")
    with CarnetClient(server, quick, retry=Retry(attempts=3, max_wait=5)) as patient:
        assert all(patient.remember(S, LYON).memory.text == LYON for _ in range(4))


def test_no_server_is_a_transport_error(container: Container) -> None:
    nobody = CarnetClient(f"http://127.0.0.1:{free_port()}", _key(container, "agent"), timeout=2)
    with nobody, pytest.raises(TransportError) as error:
        nobody.health()
    assert isinstance(error.value, CarnetError) and error.value.status is None


def test_async_client(server: str, container: Container, tmp_path: Path) -> None:
    key = _key(container, "agent", "dpo")

    async def scenario() -> None:
        async with AsyncCarnetClient(server, key) as carnet:
            assert await carnet.health() and (await carnet.readiness()).ready
            first = await carnet.remember(S, LYON, occurred_at=_at("2024-01-15T10:00:00+01:00"))
            batch = await carnet.remember_batch(S, [NewMemory("Le membre a un chat."), NewMemory("Il a un chien.")])
            ids = [m.id async for m in carnet.iter_memories(S, page_size=2)]
            assert sorted(ids) == sorted([first.memory.id, *batch.created])
            assert (await carnet.get_memory(S, first.memory.id)).text == LYON
            # found (its rank is the judge's: "Le membre a un chat", written later, may contest the address)
            assert first.memory.id in [r.memory.id for r in await carnet.search(S, "Où habite le membre ?")]
            assert "Lyon" in (await carnet.assemble(S, "adresse")).prompt
            assert (await carnet.export(S)).count == 3
            assert await carnet.export_to(S, tmp_path / "export.json") == (tmp_path / "export.json").stat().st_size
            entries = await carnet.audit()
            streamed = [e async for e in carnet.iter_audit()]
            assert streamed[:len(entries)] == list(entries) and streamed[-1].action == "audit.read"
            assert (await carnet.erase_subject(S)).complete
            with pytest.raises(SubjectNotFound):
                await carnet.search(S, "adresse")
        async with AsyncCarnetClient(server, "crn_000000000000_" + "x" * 30) as stranger:
            with pytest.raises(Unauthenticated):
                await stranger.health() and await stranger.search(S, "adresse")

    asyncio.run(scenario())


def test_legal_hold_relationship_end_and_maintenance(server: str, container: Container) -> None:
    from carnet_client import LegalHold

    with CarnetClient(server, _key(container, "agent", "dpo"), timeout=30) as dpo, \
            CarnetClient(server, _key(container, "admin"), timeout=30) as admin:
        dpo.remember(S, LYON)
        assert dpo.retention(S).legal_hold is False
        held = dpo.set_legal_hold(S, reference="LIT-2026-0042")
        assert held.legal_hold and held.hold_reference == "LIT-2026-0042" and held.hold_since is not None
        with pytest.raises(LegalHold) as refused:
            dpo.erase_subject(S)
        assert refused.value.status == 409 and refused.value.code == "legal_hold"
        assert dpo.lift_legal_hold(S).legal_hold is False
        ended = dpo.set_relationship_end(S, _at("2025-12-31T00:00:00+00:00"))
        assert ended.relationship_end == _at("2025-12-31T00:00:00+00:00")
        assert dpo.set_relationship_end(S, None).relationship_end is None
        report = admin.maintain(dry_run=True)
        assert report.dry_run and report.started_at.tzinfo is not None
        with pytest.raises(Forbidden):
            dpo.maintain()


def test_messages_in_and_intake_status_out(server: str, container: Container) -> None:
    from carnet_client import ChatMessage, IntakeNotFound

    from carnet.bootstrap.wiring import start_workers
    from tests.support.extractors import ScriptedExtractor

    start_workers(container, extractor=ScriptedExtractor())
    with CarnetClient(server, _key(container, "agent"), timeout=30) as agent:
        queued = agent.submit_messages(S, [ChatMessage("user", "Je préfère être appelé le matin.",
                                                       _at("2026-11-29T09:00:00+01:00"))],
                                       session_id="call-1", idempotency_key="call-1-1")
        assert queued.status == "pending" and not queued.finished
        done = agent.intake(queued.intake_id, wait=True, timeout=10)
        assert done.status == "done" and done.finished and len(done.memory_ids) == 1 and done.attempts == 1
        assert agent.get_memory(S, done.memory_ids[0]).text == "Je préfère être appelé le matin."
        with pytest.raises(IntakeNotFound):
            agent.intake("00000000-0000-4000-8000-000000000000")


def test_team_procedures_from_proposal_to_assemble(server: str, container: Container) -> None:
    from carnet_client import Procedure, ProcedureNotFound, ProcedurePersonalData, ProcedureState

    text = "Pour une fuite, envoyer les documents de déclaration par e-mail."
    with CarnetClient(server, _key(container, "agent"), timeout=30) as agent, \
            CarnetClient(server, _key(container, "supervisor"), timeout=30) as sup:
        agent.remember(S, "Le membre ne veut pas d'e-mail.")
        proposed = agent.propose_procedure(text, applies_when=["fuite"], queue="sinistres")
        assert isinstance(proposed, Procedure) and proposed.status == "proposed"
        assert agent.list_procedures() == () and sup.list_procedures(status="proposed") == (proposed,)
        with pytest.raises(Forbidden):
            agent.approve_procedure(proposed.id)
        with pytest.raises(ProcedurePersonalData) as caught:
            sup.propose_procedure("Rappeler le 06 12 34 56 78.")
        assert "PHONE" in caught.value.kinds
        with pytest.raises(ProcedureNotFound):
            agent.get_procedure(proposed.id)  # not approved: an agent does not see it
        approved = sup.approve_procedure(proposed.id)
        assert approved.status == "approved" and approved.decided_by is not None
        with pytest.raises(ProcedureState):
            sup.reject_procedure(proposed.id)
        assert agent.assemble(S, "Une fuite chez le membre").team_procedures == ()  # scoped to a queue
        ctx = agent.assemble(S, "Une fuite chez le membre", queue="sinistres")
        [team] = ctx.team_procedures
        assert team.id == proposed.id and team.conflict and team.conflicts[0].channel == "email"
        assert sup.retire_procedure(proposed.id).status == "retired"

    async def scenario() -> None:
        async with AsyncCarnetClient(server, _key(container, "supervisor")) as asup:
            assert [p.status for p in await asup.list_procedures()] == ["retired"]
            again = await asup.propose_procedure(text)
            assert (await asup.reject_procedure(again.id)).status == "rejected"

    asyncio.run(scenario())
