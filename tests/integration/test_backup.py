"""Backup and restore of the embedded store (real qdrant-edge shard, real SQLite, real file key store):
the round trip, erasures made after the backup applied again, refusals."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from carnet.bootstrap.container import Container
from carnet.bootstrap.ops import backup_source, build_rehasher, records_index, restore_target
from carnet.bootstrap.wiring import build
from carnet.crypto.tenant_hasher import TENANT_ENTRY
from carnet.domain.intake import Message
from carnet.domain.procedures import Stated
from carnet.domain.records import Memory
from carnet.errors import BackupCorrupt, RestoreRefused, StoreLocked, SubjectNotFound
from carnet.ports import Embedder, RecordFilter
from carnet.services.backup.restore import restore_backup
from carnet.services.backup.snapshots import BackupReport, create_backup, list_backups, prune_backups
from carnet.services.intake.queue import submit
from carnet.services.lifecycle.keys import shred_tenant
from carnet.services.lifecycle.rehash import rehash_tenant
from carnet.services.memories import reads as memories
from carnet.services.memories import recall
from carnet.services.memories.remember import NewMemory, remember
from carnet.services.rights.erase import erase_subject
from carnet.services.scope import scope_for
from carnet.settings.root import Settings

FACTS = {
    "GONE": ["Le membre habite à Lyon 7e.", "Le membre habite maintenant à Villeurbanne.",
             "Mme Ghislaine Kerjean a donné l'IBAN FR76 3000 6000 0112 3456 7890 189."],
    "STAYS": ["Budget maximum de 600 euros pour l'assurance auto.", "Le client préfère être appelé le matin."],
}
EVERY = RecordFilter(statuses=None)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys")


def _fill(c: Container, *subjects: str, tenant: str = "t") -> None:
    for s in subjects:
        remember(c.deps, tenant=tenant, subject_id=s, actor="a", items=[NewMemory(text=f) for f in FACTS[s]])


def _view(c: Container, subject: str) -> tuple[list[Memory], list[tuple[str, str]]]:
    """Every record as stored, then what a search answers (ids and texts, in order)."""
    listed = memories.list_memories(c.deps, tenant="t", subject_id=subject, status=None, limit=500).items
    found = recall.search(c.deps, tenant="t", subject_id=subject, query=recall.Query("où habite le membre ?", k=5))
    return listed, [(r.memory.id, r.memory.text) for r in found]


def _backup(c: Container, tmp_path: Path, *, compress: bool = True) -> BackupReport:
    return create_backup(source=backup_source(c), output=tmp_path / "backups", compress=compress)


@pytest.mark.slow
def test_round_trip_while_serving_restores_what_was_stored(settings: Settings, embedder: Embedder,
                                                           tmp_path: Path) -> None:
    c = build(settings, embedder=embedder)
    try:
        _fill(c, "GONE", "STAYS")
        before = {s: _view(c, s) for s in FACTS}
        history = c.deps.catalog.history(scope_for(c.deps, "t", "GONE"), before["GONE"][0][0].id)
        report = _backup(c, tmp_path)  # the container holds the store, as `carnet serve` does
        later = [NewMemory(text="Écrit après la sauvegarde.")]
        remember(c.deps, tenant="t", subject_id="STAYS", actor="a", items=later)
    finally:
        c.close()
    assert report.records == 5 and report.paused_seconds < report.seconds
    restored = restore_backup(archive=report.path, target=restore_target(settings))
    assert restored.records == 5 and restored.reerased.applied == 0
    assert restored.previous_data is not None and (restored.previous_data / "catalog.sqlite3").exists()
    c = build(settings, embedder=embedder)
    try:
        assert {s: _view(c, s) for s in FACTS} == before  # the later write is gone, the rest identical
        assert c.deps.catalog.history(scope_for(c.deps, "t", "GONE"), before["GONE"][0][0].id) == history
    finally:
        c.close()


@pytest.mark.slow
def test_an_erasure_after_the_backup_is_applied_again_on_restore(settings: Settings, embedder: Embedder,
                                                                 tmp_path: Path) -> None:
    c = build(settings, embedder=embedder)
    try:
        _fill(c, "GONE", "STAYS")
        gone = scope_for(c.deps, "t", "GONE")
        old_ids = [m.id for m in _view(c, "GONE")[0]]
        stays = _view(c, "STAYS")
        queued = submit(c.deps, c.queue, tenant="t", subject_id="GONE", session_id=None, actor="k",
                        messages=[Message("user", "Mon IBAN a changé.")], idempotency_key=None)
        said = Stated("Pour un vol, on demande toujours le dépôt de plainte.", "vol")  # read from GONE's call
        assert len(c.facade.propose_extracted("t", gone.subject, [said])) == 1
        report = _backup(c, tmp_path)
        assert erase_subject(c.deps, tenant="t", subject_id="GONE", derived=c.facade).procedures_deleted == 1
    finally:
        c.close()
    restored = restore_backup(archive=report.path, target=restore_target(settings))
    assert restored.reerased.as_dict() == {"entries": 1, "applied": 1, "subjects_erased": 1, "records_deleted": 3,
                                           "catalog_rows_deleted": restored.reerased.catalog_rows_deleted,
                                           "data_keys_destroyed": 0, "verified": True, "procedures_deleted": 1}
    assert restored.reerased.catalog_rows_deleted >= 5  # history of 3 records, registry row, pseudonym map
    c = build(settings, embedder=embedder)
    try:
        assert records_index(c).count(gone, where=EVERY) == 0
        assert c.facade.procedures.list("t") == []  # the procedure read from its call too
        assert c.deps.intakes.get("t", queued.id) is None  # its queued messages went with it
        assert not c.deps.catalog.is_registered(gone) and c.deps.catalog.pseudonym_map(gone) is None
        assert all(c.deps.catalog.history(gone, i) == [] for i in old_ids)
        with pytest.raises(SubjectNotFound):
            memories.list_memories(c.deps, tenant="t", subject_id="GONE")
        with pytest.raises(SubjectNotFound):
            recall.search(c.deps, tenant="t", subject_id="GONE", query=recall.Query("adresse"))
        assert _view(c, "STAYS") == stays
    finally:
        c.close()


@pytest.mark.slow
def test_an_erasure_older_than_the_backup_leaves_a_subject_written_again(settings: Settings, embedder: Embedder,
                                                                         tmp_path: Path) -> None:
    """The ledger entry predates the backup: the subject's new records (new consent, new key) stay."""
    c = build(settings, embedder=embedder)
    try:
        _fill(c, "GONE")
        erase_subject(c.deps, tenant="t", subject_id="GONE")
        remember(c.deps, tenant="t", subject_id="GONE", actor="a", items=[NewMemory(text="Nouveau contrat auto.")])
        report = _backup(c, tmp_path)
    finally:
        c.close()
    restored = restore_backup(archive=report.path, target=restore_target(settings))
    assert restored.reerased.entries == 1 and restored.reerased.applied == 0
    c = build(settings, embedder=embedder)
    try:
        assert [m.text for m in memories.list_memories(c.deps, tenant="t", subject_id="GONE").items] == [
            "Nouveau contrat auto."]
    finally:
        c.close()


@pytest.mark.slow
def test_a_tenant_shredded_after_the_backup_loses_its_records_on_restore(settings: Settings, embedder: Embedder,
                                                                        tmp_path: Path) -> None:
    c = build(settings, embedder=embedder)
    try:
        _fill(c, "GONE", tenant="t1")
        _fill(c, "STAYS")
        shredded = scope_for(c.deps, "t1", "GONE")
        report = _backup(c, tmp_path)
        shred_tenant(c.kms, c.keyring, tenant="t1", ledger=c.deps.ledger)
    finally:
        c.close()
    restored = restore_backup(archive=report.path, target=restore_target(settings))
    assert restored.reerased.records_deleted == 3 and restored.reerased.verified
    c = build(settings, embedder=embedder)
    try:
        assert records_index(c).count(shredded, where=EVERY) == 0
        assert len(memories.list_memories(c.deps, tenant="t", subject_id="STAYS").items) == 2
    finally:
        c.close()


def test_the_ledger_names_subjects_by_keyed_hash_only_and_no_backup_holds_it(container: Container,
                                                                            tmp_path: Path) -> None:
    secret = "ADH-SECRET-424242"
    remember(container.deps, tenant="t", subject_id=secret, actor="a", items=[NewMemory(text="Un fait.")])
    scope = scope_for(container.deps, "t", secret)
    erase_subject(container.deps, tenant="t", subject_id=secret)
    ledger = container.settings.resolved_erasure_ledger
    assert secret.encode() not in ledger.read_bytes()
    [entry] = container.deps.ledger.entries()
    assert (entry.tenant, entry.subject, entry.hash_key) == ("t", scope.subject, TENANT_ENTRY)
    report = _backup(container, tmp_path)
    listing = list_backups(directory=report.path.parent)
    assert [b.path for b in listing] == [report.path] and listing[0].manifest is not None
    assert all("ledger" not in name and "key" not in name for name in listing[0].manifest.members)
    assert not ledger.is_relative_to(container.settings.data_dir)


@pytest.mark.slow
def test_a_tampered_archive_is_refused_and_the_data_dir_is_untouched(settings: Settings, embedder: Embedder,
                                                                    tmp_path: Path) -> None:
    c = build(settings, embedder=embedder)
    try:
        _fill(c, "STAYS")
        report = _backup(c, tmp_path, compress=False)
    finally:
        c.close()
    raw = bytearray(report.path.read_bytes())
    raw[len(raw) // 2] ^= 0xFF  # somewhere inside a member
    report.path.write_bytes(bytes(raw))
    catalog = (settings.data_dir / "catalog.sqlite3").read_bytes()
    with pytest.raises(BackupCorrupt):
        restore_backup(archive=report.path, target=restore_target(settings))
    assert sorted(p.name for p in settings.data_dir.iterdir()) == ["audit.sqlite3", "catalog.sqlite3", "vectors"]
    assert (settings.data_dir / "catalog.sqlite3").read_bytes() == catalog


def test_restore_is_refused_while_the_store_is_held(container: Container, tmp_path: Path) -> None:
    report = _backup(container, tmp_path)
    with pytest.raises(StoreLocked):
        restore_backup(archive=report.path, target=restore_target(container.settings))
    assert not [p for p in container.settings.data_dir.iterdir() if p.name.startswith(".")]


@pytest.mark.slow
def test_a_backup_older_than_a_rehash_is_refused(settings: Settings, embedder: Embedder, tmp_path: Path) -> None:
    c = build(settings, embedder=embedder)
    try:
        _fill(c, "STAYS")
        report = _backup(c, tmp_path)
        rehash_tenant(build_rehasher(c), tenant="t")
        after = _backup(c, tmp_path)
    finally:
        c.close()
    with pytest.raises(RestoreRefused, match="predates a hash-key rotation"):
        restore_backup(archive=report.path, target=restore_target(settings))
    assert restore_backup(archive=after.path, target=restore_target(settings)).records == 2


def test_a_backup_taken_during_writes_is_consistent(settings: Settings, embedder: Embedder, tmp_path: Path) -> None:
    """Writes keep coming while the backup runs: what it holds opens, record by record, with its history."""
    c = build(settings, embedder=embedder)
    stop = threading.Event()
    errors: list[BaseException] = []

    def write() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            try:
                remember(c.deps, tenant="t", subject_id=f"W{n % 3}", actor="a",
                         items=[NewMemory(text=f"Appel numéro {n} au sujet du dossier RC-2026-{n:04d}.")])
            except BaseException as exc:  # collected and re-raised below
                errors.append(exc)
                return

    writer = threading.Thread(target=write)
    try:
        writer.start()
        while not any(c.deps.catalog.tenants()):
            stop.wait(0.01)
        report = _backup(c, tmp_path)
    finally:
        stop.set()
        writer.join()
        c.close()
    assert not errors
    other = Settings(data_dir=tmp_path / "restored", key_dir=settings.resolved_key_dir)
    restore_backup(archive=report.path, target=restore_target(other))
    c = build(other, embedder=embedder)
    try:
        total = 0
        for subject in ("W0", "W1", "W2"):
            scope = scope_for(c.deps, "t", subject)
            if records_index(c).count(scope, where=EVERY) == 0:
                continue  # registered (that happens before the subject's lock) but not written yet: harmless
            items = memories.list_memories(c.deps, tenant="t", subject_id=subject, status=None, limit=500).items
            assert all(c.deps.catalog.history(scope, m.id) for m in items)  # records and catalog agree
            total += len(items)
        assert total == report.records
    finally:
        c.close()


def test_prune_keeps_the_newest(container: Container, tmp_path: Path) -> None:
    reports = [_backup(container, tmp_path) for _ in range(3)]
    assert prune_backups(directory=tmp_path / "backups", keep=1) == [r.path for r in reports[:2]]
    assert [b.path for b in list_backups(directory=tmp_path / "backups")] == [reports[2].path]


def test_a_backup_inside_the_data_dir_is_refused(container: Container) -> None:
    from carnet.errors import InvalidInput

    with pytest.raises(InvalidInput, match="outside the data dir"):
        create_backup(source=backup_source(container), output=container.settings.data_dir / "b")
