"""Restoring a superseded record (issue 47, item 4) on the real embedded stack: undone both ways,
history and audit without the reason's words, the correction kept sealed as a label only where the
tenant opted in, read back pseudonymised, and erased with the member. Sentences written for this test."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from carnet.bootstrap.container import Container
from carnet.bootstrap.ops import build_rehasher
from carnet.bootstrap.wiring import build
from carnet.crypto.correction_sealer import CorrectionSealer
from carnet.crypto.errors import CryptoError, EnvelopeError
from carnet.domain.corrections import NOT_SUPERSEDED
from carnet.domain.records import HistoryEntry, Kind, Scope, Source, Status
from carnet.errors import Forbidden, MemoryNotFound, NotSuperseded
from carnet.ports import Embedder
from carnet.services.apikeys import Principal
from carnet.services.lifecycle.rehash import rehash_tenant
from carnet.services.memories import reads
from carnet.services.memories.corrections import corrections_for
from carnet.services.memories.remember import NewMemory, insert_new, keyed_id
from carnet.services.scope import scope_for
from carnet.settings.root import Settings

AT = datetime(2025, 1, 15, 10, tzinfo=UTC)
LATER = AT + timedelta(days=140)
RULE = "same topic, another value"
OLD = "Le membre habite à Lyon 7e."
NEW = "Le membre habite maintenant à Villeurbanne."
REASON = "Mme Berthier confirme Lyon, rappeler au 06 12 34 56 78."
SUPERVISOR = Principal("k-supervisor", "t", ("supervisor",))
DPO = Principal("k-dpo", "t", ("dpo",))
AGENT = Principal("k-agent", "t", ("agent",))


@pytest.fixture
def keeping(tmp_path: Path, embedder: Embedder) -> Iterator[Container]:
    """A server whose tenant ``t`` keeps corrections (``CARNET_KEEP_CORRECTIONS={"t": true}``)."""
    c = build(Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys", keep_corrections={"t": True}),
              embedder=embedder)
    try:
        yield c
    finally:
        c.close()


def _superseded(c: Container, subject: str, old: str = OLD, new: str = NEW) -> tuple[str, str]:
    """Two notes, the older closed by the newer as ``remember`` closes it (``_supersede``): written
    without reconcile, so that what is tested here does not depend on the judge of the day."""
    insert_new(c.deps, tenant="t", subject_id=subject, actor="a",
               items=[NewMemory(old, occurred_at=AT), NewMemory(new, occurred_at=LATER)])
    ids = {m.text: m.id for m in reads.list_memories(c.deps, tenant="t", subject_id=subject).items}
    old_id, new_id = ids[old], ids[new]
    scope = scope_for(c.deps, "t", subject)
    with c.deps.locks.for_scope(scope):
        [stored] = c.deps.index.get(scope, [old_id])
        # contested first (an LLM asked about an unsure pair closed it): a restore removes that mark too
        c.deps.index.replace_payload(scope, [stored.contested(by=new_id).superseded(by=new_id, at=LATER)])
        c.deps.catalog.append_history(scope, [HistoryEntry(old_id, LATER, "superseded", "a",
                                                           {"by": new_id, "rule": RULE})])
    return old_id, new_id


def _get(c: Container, subject: str, memory_id: str):  # type: ignore[no-untyped-def]
    return reads.get_memory(c.deps, tenant="t", subject_id=subject, memory_id=memory_id)


def test_restore_undoes_the_supersession_both_ways(container: Container) -> None:
    old_id, new_id = _superseded(container, "R-1")
    done = container.facade.restore(SUPERVISOR, subject_id="R-1", memory_id=old_id, reason=REASON)
    assert done.newer == new_id and not done.label_kept  # the default keeps no correction
    old = _get(container, "R-1", old_id)
    assert old.status is Status.ACTIVE and old.valid_to is None and old.superseded_by is None
    assert old.contested_by == ()  # a person said it is true: not ranked after the newer note either
    assert done.memory.status is Status.ACTIVE and done.memory.text == OLD
    assert _get(container, "R-1", new_id).status is Status.ACTIVE  # both notes are true again, side by side
    active = {m.id for m in reads.list_memories(container.deps, tenant="t", subject_id="R-1").items}
    assert {old_id, new_id} <= active

    scope = scope_for(container.deps, "t", "R-1")
    [*_, restored] = container.deps.catalog.history(scope, old_id)
    assert restored.action == "restored" and restored.actor == "k-supervisor"
    assert restored.detail == {"superseded_by": new_id, "reason_chars": str(len(REASON)), "label_kept": "false"}
    [*_, newer] = container.deps.catalog.history(scope, new_id)
    assert newer.action == "restored" and newer.detail == {"no_longer_supersedes": old_id}
    assert container.deps.catalog.corrections("t") == []

    container.audit.flush()
    [entry] = [e.event for e in container.audit.log.entries("t") if e.event.action == "memory.restore"]
    assert entry.outcome == "ok" and entry.targets == (old_id,) and entry.detail == {"reason_chars": len(REASON)}
    assert "Berthier" not in repr(entry) and "Lyon" not in repr(entry)


def test_refusals_leave_the_record_as_it_was(container: Container) -> None:
    old_id, new_id = _superseded(container, "R-2")
    with pytest.raises(NotSuperseded) as active:
        container.facade.restore(DPO, subject_id="R-2", memory_id=new_id)
    assert active.value.code == "not_superseded" and active.value.status == 409
    with pytest.raises(MemoryNotFound):
        container.facade.restore(DPO, subject_id="R-2", memory_id="00000000-0000-4000-8000-000000000000")
    with pytest.raises(Forbidden):  # an agent relays what a member says; a correction of reconcile is a person's
        container.facade.restore(AGENT, subject_id="R-2", memory_id=old_id)
    assert _get(container, "R-2", old_id).status is Status.SUPERSEDED
    container.audit.flush()
    refused = [e.event.detail.get("error") for e in container.audit.log.entries("t")
               if e.event.action == "memory.restore"]
    assert refused == ["not_superseded", "memory_not_found", "forbidden"]
    container.facade.restore(DPO, subject_id="R-2", memory_id=old_id)
    with pytest.raises(NotSuperseded):  # a second restore has nothing left to undo
        container.facade.restore(DPO, subject_id="R-2", memory_id=old_id)


def test_the_remainder_of_a_note_closed_in_part_goes_when_it_is_restored(container: Container) -> None:
    """``remember`` keeps the parts still true of a note closed in part as a record of their own (its
    id keyed on the closed one's); the restored note says them again, so that record is deleted."""
    turn = "La cotisation habitation est de 32 euros par mois ; le conseiller ajoute la garantie piscine au contrat."
    later = "La cotisation habitation passe à 35 euros par mois."
    closed, _ = _superseded(container, "R-3", turn, later)
    rest = "le conseiller ajoute la garantie piscine au contrat."
    insert_new(container.deps, tenant="t", subject_id="R-3", actor="a",
               items=[NewMemory(rest, occurred_at=AT, idempotency_key=f"rest:{closed}")])
    scope = scope_for(container.deps, "t", "R-3")
    done = container.facade.restore(DPO, subject_id="R-3", memory_id=closed)
    assert done.rest_deleted == keyed_id(container.deps.hasher, scope, f"rest:{closed}")
    texts = [m.text for m in reads.list_memories(container.deps, tenant="t", subject_id="R-3").items]
    assert sorted(texts) == sorted([turn, later])
    assert container.deps.catalog.history(scope, done.rest_deleted)[-1].detail == {"reason": "restored",
                                                                                  "restored": closed}


def test_a_kept_correction_is_sealed_pseudonymised_and_read_back(keeping: Container, tmp_path: Path) -> None:
    old_id, new_id = _superseded(keeping, "R-4")
    done = keeping.facade.restore(SUPERVISOR, subject_id="R-4", memory_id=old_id, reason=REASON)
    assert done.label_kept
    scope = scope_for(keeping.deps, "t", "R-4")
    assert keeping.deps.catalog.history(scope, old_id)[-1].detail["label_kept"] == "true"

    assert keeping.facade.corrections is not None
    [pair] = list(corrections_for(keeping.deps.catalog, keeping.facade.corrections.sealer, "t"))
    old, new = _get(keeping, "R-4", old_id), _get(keeping, "R-4", new_id)
    assert (pair.older, pair.newer, pair.label) == (old.pseudo_text, new.pseudo_text, NOT_SUPERSEDED)
    assert pair.older_valid_from == AT and pair.newer_valid_from == LATER
    assert pair.closed_at == LATER and pair.rule == RULE  # what reconcile said when it closed it
    assert "Berthier" not in pair.reason and "06 12 34 56 78" not in pair.reason and "Lyon" in pair.reason

    keeping.deps.catalog.check()
    stored = b"".join(p.read_bytes() for p in (tmp_path / "data").glob("catalog.sqlite3*"))
    for plain in ("Lyon", "Villeurbanne", "Berthier", "06 12 34 56 78", "rappeler"):
        assert plain.encode() not in stored, plain


def test_a_sealed_correction_opens_only_where_it_was_sealed(keeping: Container) -> None:
    old_id, _ = _superseded(keeping, "R-5")
    keeping.facade.restore(DPO, subject_id="R-5", memory_id=old_id)
    [row] = keeping.deps.catalog.corrections("t")
    sealer = CorrectionSealer(keeping.keyring)
    assert sealer.open(row.scope, row.id, row.sealed).older
    with pytest.raises(EnvelopeError):  # bound to its id and tenant
        sealer.open(row.scope, "another-id", row.sealed)
    _superseded(keeping, "R-5b")  # another member of the tenant: its own key, never this one
    with pytest.raises(CryptoError):
        sealer.open(scope_for(keeping.deps, "t", "R-5b"), row.id, row.sealed)
    with pytest.raises(CryptoError):
        sealer.open(Scope("u", row.scope.subject), row.id, row.sealed)


def test_corrections_are_erased_with_the_member(keeping: Container) -> None:
    kept_id, _ = _superseded(keeping, "R-6")
    gone_id, _ = _superseded(keeping, "R-7")
    keeping.facade.restore(DPO, subject_id="R-6", memory_id=kept_id)
    keeping.facade.restore(DPO, subject_id="R-7", memory_id=gone_id)
    assert len(keeping.deps.catalog.corrections("t")) == 2
    receipt = keeping.facade.erase(DPO, subject_id="R-7")
    assert receipt.complete and receipt.verified["corrections_gone"]
    [left] = keeping.deps.catalog.corrections("t")
    assert left.scope == scope_for(keeping.deps, "t", "R-6")
    assert keeping.facade.corrections is not None
    assert len(list(corrections_for(keeping.deps.catalog, keeping.facade.corrections.sealer, "t"))) == 1


def test_a_rehash_moves_the_corrections_and_they_still_open(tmp_path: Path, embedder: Embedder) -> None:
    """``carnet keys rehash``: the rows move to the member's new hash with the other catalog rows, open
    with the same data key (the subject hash is not in their associated data), and go with an erasure."""
    settings = Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys", keep_corrections={"*": True})
    c = build(settings, embedder=embedder)
    try:
        old_id, _ = _superseded(c, "R-8")
        c.facade.restore(DPO, subject_id="R-8", memory_id=old_id)
        before = scope_for(c.deps, "t", "R-8")
        rehash_tenant(build_rehasher(c), tenant="t")
    finally:
        c.close()
    c = build(settings, embedder=embedder)  # a fresh process: the catalog names the new hash key
    try:
        after = scope_for(c.deps, "t", "R-8")
        assert after != before and c.deps.catalog.subject_corrections(after) == 1
        assert c.facade.corrections is not None
        [pair] = corrections_for(c.deps.catalog, c.facade.corrections.sealer, "t")
        assert pair.older == _get(c, "R-8", old_id).pseudo_text
        assert c.facade.erase(DPO, subject_id="R-8").verified["corrections_gone"]
        assert c.deps.catalog.corrections("t") == []
    finally:
        c.close()


def test_the_calls_summary_closed_with_the_note_is_reopened_with_it(container: Container) -> None:
    """``remember`` closes a call's summary that restates a fact it closes, by the same newer record
    (``_close_summaries``); restoring the fact reopens that summary, and no other."""
    call = (Source("intake", "I-7", "call-7"),)
    insert_new(container.deps, tenant="t", subject_id="R-9", actor="a", items=[
        NewMemory(OLD, occurred_at=AT, sources=call),
        NewMemory(NEW, occurred_at=LATER),
        NewMemory("Appel : le membre confirme habiter à Lyon 7e.", kind=Kind.EPISODE, occurred_at=AT,
                  idempotency_key="intake:I-7:episode"),
        NewMemory("Appel : le membre demande une attestation.", kind=Kind.EPISODE, occurred_at=AT,
                  idempotency_key="intake:I-8:episode")])
    scope = scope_for(container.deps, "t", "R-9")
    by_text = {m.text: m for m in reads.list_memories(container.deps, tenant="t", subject_id="R-9").items}
    old, new = by_text[OLD], by_text[NEW]
    summary = keyed_id(container.deps.hasher, scope, "intake:I-7:episode")
    other = keyed_id(container.deps.hasher, scope, "intake:I-8:episode")
    with container.deps.locks.for_scope(scope):
        closed = container.deps.index.get(scope, [old.id, summary, other])
        container.deps.index.replace_payload(scope, [m.superseded(by=new.id, at=LATER) for m in closed])
    container.facade.restore(DPO, subject_id="R-9", memory_id=old.id)
    status = {m.id: m.status for m in container.deps.index.get(scope, [old.id, summary, other])}
    assert status == {old.id: Status.ACTIVE, summary: Status.ACTIVE, other: Status.SUPERSEDED}
    assert container.deps.catalog.history(scope, summary)[-1].detail == {"with": old.id}
