"""``carnet keys rehash`` on the real embedded stack: every hash moves to a new key, nothing is lost,
the old key is destroyed, and an interrupted run finishes when run again."""

from __future__ import annotations

from pathlib import Path

import pytest

from carnet.bootstrap.container import Container
from carnet.bootstrap.ops import build_rehasher
from carnet.bootstrap.wiring import build
from carnet.crypto.sealed_index import SealedIndex
from carnet.crypto.tenant_hasher import TENANT_ENTRY
from carnet.domain.procedures import Stated
from carnet.domain.records import Scope
from carnet.errors import Conflict
from carnet.ports import Embedder, RecordFilter
from carnet.services.lifecycle.rehash import rehash_tenant
from carnet.services.memories import reads as memories
from carnet.services.memories import recall
from carnet.services.memories.remember import NewMemory, remember
from carnet.services.rights.erase import erase_subject
from carnet.services.scope import scope_for
from carnet.settings.root import Settings

STORIES = {
    "ADH-1001": ["Le membre conteste le dossier RC-2026-1184 (dégât des eaux).",
                 "Le membre préfère être appelé le matin."],
    "ADH-1002": ["La cliente a un contrat habitation formule confort.",
                 "Elle habite à Lyon 7e depuis 2019."],
    "ADH-1003": ["Le client attend le remboursement du sinistre SIN-00042.",
                 "Mme Ghislaine Kerjean a donné l'IBAN FR76 3000 6000 0112 3456 7890 189."],
}


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys")


def _fill(c: Container) -> dict[str, str]:
    for subject, facts in STORIES.items():
        remember(c.deps, tenant="t", subject_id=subject, actor="a", items=[NewMemory(text=f) for f in facts])
    remember(c.deps, tenant="u", subject_id="ADH-1001", actor="a", items=[NewMemory(text="Autre locataire.")])
    return {s: scope_for(c.deps, "t", s).subject for s in STORIES}


def _texts(c: Container, subject: str, tenant: str = "t") -> list[str]:
    return sorted(m.text for m in memories.list_memories(c.deps, tenant=tenant, subject_id=subject).items)


def test_rehash_moves_every_subject_and_destroys_the_old_key(settings: Settings, embedder: Embedder) -> None:
    c = build(settings, embedder=embedder)
    try:
        old = _fill(c)
        said = Stated("Pour un vol, on demande toujours le dépôt de plainte.", "vol")  # read from ADH-1003's call
        [derived] = c.facade.propose_extracted("t", old["ADH-1003"], [said])
        first = memories.list_memories(c.deps, tenant="t", subject_id="ADH-1001").items[0]
        history_before = memories.memory_history(c.deps, tenant="t", subject_id="ADH-1001", memory_id=first.id)
        seen: list[tuple[int, int]] = []
        report = rehash_tenant(build_rehasher(c), tenant="t", progress=lambda d, t: seen.append((d, t)))
    finally:
        c.close()
    assert report.as_dict() == {
        "tenant": "t", "old_hash_key": TENANT_ENTRY, "new_hash_key": TENANT_ENTRY + ".2", "subjects_moved": 3,
        "records_moved": 6, "leftover_entries_deleted": 0, "old_hash_key_destroyed": True}
    assert seen == [(1, 3), (2, 3), (3, 3)]

    c = build(settings, embedder=embedder)  # a fresh process: the catalog names the new key
    try:
        new = {s: scope_for(c.deps, "t", s).subject for s in STORIES}
        assert all(new[s] != old[s] for s in STORIES)
        for subject, facts in STORIES.items():
            assert _texts(c, subject) == sorted(facts)
        assert memories.memory_history(c.deps, tenant="t", subject_id="ADH-1001", memory_id=first.id) \
            == history_before
        hits = recall.search(c.deps, tenant="t", subject_id="ADH-1002", query=recall.Query("Où habite-t-elle ?", k=1))
        assert hits[0].memory.text == "Elle habite à Lyon 7e depuis 2019."
        found = memories.lookup(c.deps, tenant="t", subject_id="ADH-1001", identifier="RC-2026-1184")
        assert [m.text for m in found] == [STORIES["ADH-1001"][0]]  # blind tokens recomputed
        assert _texts(c, "ADH-1001", tenant="u") == ["Autre locataire."]  # another tenant is untouched
        # the pseudonym map was resealed for the new hash: names and identifiers still resolve
        pmap = c.deps.pii.maps.load(scope_for(c.deps, "t", "ADH-1003"))
        assert "<PERSON_1>" in pmap.entries.values() and "<IBAN_1>" in pmap.entries.values()
        by_iban = memories.lookup(c.deps, tenant="t", subject_id="ADH-1003", identifier="FR7630006000011234567890189")
        assert [m.text for m in by_iban] == [STORIES["ADH-1003"][1]]
        # nothing is left under the old hashes: no record, no data key, no hash key
        index = c.deps.index
        assert isinstance(index, SealedIndex)
        for subject in STORIES:
            assert index.inner.count(Scope("t", old[subject]), where=RecordFilter(statuses=None)) == 0
        names = {e.subject for e in c.keyring.entries("t")}
        assert names == set(new.values()) | {TENANT_ENTRY + ".2"}
        # the registry keeps working: a new subject, a write, an erasure
        remember(c.deps, tenant="t", subject_id="ADH-1004", actor="a", items=[NewMemory(text="Nouveau membre.")])
        erased = scope_for(c.deps, "t", "ADH-1003")
        moved = c.facade.procedures.get("t", derived.id)
        assert moved is not None and moved.origin == erased.subject  # the origin moved too
        receipt = erase_subject(c.deps, tenant="t", subject_id="ADH-1003", derived=c.facade)
        assert receipt.complete and receipt.records_deleted == 2 and receipt.procedures_deleted == 1
        assert c.deps.catalog.pseudonym_map(erased) is None  # the map went with the subject
        again = rehash_tenant(build_rehasher(c), tenant="t")  # a second rotation, after the erasure
        assert (again.old_hash_key, again.new_hash_key, again.subjects_moved) == (
            TENANT_ENTRY + ".2", TENANT_ENTRY + ".3", 3)
    finally:
        c.close()


def test_an_interrupted_rehash_finishes_when_run_again(settings: Settings, embedder: Embedder,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    c = build(settings, embedder=embedder)
    try:
        _fill(c)
        rehasher = build_rehasher(c)
        calls = {"n": 0}
        real = c.deps.catalog.move_subject

        def crash_on_second(*args: object, **kwargs: object) -> None:
            calls["n"] += 1
            if calls["n"] == 2:  # records of the second subject moved, its catalog rows not yet
                raise RuntimeError("power cut")
            real(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(c.deps.catalog, "move_subject", crash_on_second)
        with pytest.raises(RuntimeError):
            rehash_tenant(rehasher, tenant="t")
        monkeypatch.undo()
        report = rehash_tenant(build_rehasher(c), tenant="t")
        assert report.subjects_moved == 2 and report.old_hash_key_destroyed
    finally:
        c.close()
    c = build(settings, embedder=embedder)
    try:
        for subject, facts in STORIES.items():
            assert _texts(c, subject) == sorted(facts)
        assert len(c.keyring.entries("t")) == len(STORIES) + 1  # one data key each, one hash key
    finally:
        c.close()


def test_rehash_refuses_a_tenant_with_unregistered_subjects(settings: Settings, embedder: Embedder) -> None:
    c = build(settings, embedder=embedder)
    try:
        _fill(c)
        with c.deps.locks.for_scope(Scope("t", "f" * 32)):  # a key is only created under its subject's lock
            c.keyring.data_key("t", "f" * 32)  # a data key whose subject id nobody can read back
        with pytest.raises(Conflict):
            rehash_tenant(build_rehasher(c), tenant="t")
        assert _texts(c, "ADH-1002") == sorted(STORIES["ADH-1002"])  # nothing started
    finally:
        c.close()


@pytest.mark.slow
def test_cli_rehash_reports_progress_and_json_and_refuses_while_the_store_is_held(settings: Settings,
                                                                                 embedder: Embedder) -> None:
    import json

    from typer.testing import CliRunner

    from carnet.entrypoints.cli.main import app

    c = build(settings, embedder=embedder)
    _fill(c)
    runner = CliRunner()
    args = ["keys", "rehash", "--tenant", "t", "--data-dir", str(settings.data_dir)]
    env = {"CARNET_KEY_DIR": str(settings.resolved_key_dir)}
    held = runner.invoke(app, args, env=env)
    assert held.exit_code == 2 and "rehash runs offline" in held.stderr
    c.close()
    done = runner.invoke(app, args, env=env)
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout.strip().splitlines()[-1])["subjects_moved"] == 3
    assert "rehash t: 3/3 subjects" in done.stderr
    assert not any(s in done.output for s in STORIES)  # no subject id printed
