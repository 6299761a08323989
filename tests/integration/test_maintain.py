"""Maintenance on the real embedded stack: retention, relationship end, legal hold, decay, supersession
orphans, dry runs, the report, compaction, the command line."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from carnet.bootstrap.container import Container
from carnet.bootstrap.wiring import build
from carnet.crypto.sealed_index import SealedIndex
from carnet.domain.records import Scope
from carnet.domain.retention import SubjectRetention
from carnet.entrypoints.cli.main import app
from carnet.errors import InvalidInput, SubjectNotFound
from carnet.ports import AccessUpdate, Embedder, RecordFilter, VectorIndex
from carnet.services.deps import Deps
from carnet.services.lifecycle.maintain import maintain
from carnet.services.memories.remember import NewMemory, remember
from carnet.services.rights import retention
from carnet.services.scope import scope_for
from carnet.settings.root import Settings

RETENTION = {"acme": {"call_note": {"days": 183}, "aml": {"days": 1826, "after": "relationship_end"}},
             "*": {"prospect": {"days": 1095}}}
NOW = datetime.now(UTC)
EVERY = RecordFilter(statuses=None)


@dataclass
class At:
    t: datetime

    def now(self) -> datetime:
        return self.t


def settings_for(tmp_path: Path, **extra: object) -> Settings:
    return Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys", retention=RETENTION,
                    **extra)  # type: ignore[arg-type]


@pytest.fixture
def c(tmp_path: Path, embedder: Embedder) -> Iterator[Container]:
    container = build(settings_for(tmp_path), embedder=embedder)
    try:
        yield container
    finally:
        container.close()


def later(c: Container, days: float) -> Deps:
    return replace(c.deps, clock=At(NOW + timedelta(days=days)))


def tell(c: Container, subject: str, text: str, *, tenant: str = "acme", **kw: object) -> str:
    item = NewMemory(text=text, **kw)  # type: ignore[arg-type]
    return remember(c.deps, tenant=tenant, subject_id=subject, actor="a", items=[item])[0].memory.id


def raw(c: Container) -> VectorIndex:
    assert isinstance(c.deps.index, SealedIndex)
    return c.deps.index.inner


def test_expired_records_are_deleted_physically_with_a_history_that_keeps_no_text(c: Container) -> None:
    note = tell(c, "S1", "Appel du membre pour un devis habitation.", retention="call_note",
                occurred_at=NOW - timedelta(days=200))
    kept = tell(c, "S1", "Le membre a un contrat auto formule Tiers.")
    scope = scope_for(c.deps, "acme", "S1")
    sealed = raw(c).get(scope, [note])[0].text
    assert sealed.startswith("enc1:")

    dry = maintain(c.deps, dry_run=True)
    assert dry.tenants["acme"].deleted == {"retention": 1} and not dry.compacted
    assert raw(c).count(scope, where=EVERY) == 2 and c.deps.catalog.history(scope, note)[-1].action == "created"

    report = maintain(c.deps)
    assert report.tenants["acme"].as_dict() == {"subjects": 1, "held": 0, "failed": 0, "unreadable": 0,
                                                "deleted": {"retention": 1}}
    assert report.compacted and report.totals() == {"retention": 1}
    assert raw(c).get(scope, [note]) == [] and [m.id for m in raw(c).get(scope, [note, kept])] == [kept]
    last = c.deps.catalog.history(scope, note)[-1]
    assert (last.action, last.actor, last.detail) == ("deleted", "maintain", {"reason": "retention",
                                                                              "retention": "call_note"})
    assert "devis" not in json.dumps([e.detail for e in c.deps.catalog.history(scope, note)])
    # compaction rewrote the segments: the deleted record's sealed text is no longer in them
    segments = c.settings.data_dir / "vectors" / "segments"
    needle = sealed[20:80].encode()
    assert not [p for p in segments.rglob("*") if p.is_file() and needle in p.read_bytes()]
    assert maintain(c.deps).totals() == {}  # nothing left to do


def test_a_legal_hold_protects_everything_until_it_is_lifted(c: Container) -> None:
    old = tell(c, "S2", "Appel du membre au sujet d'un sinistre.", retention="call_note",
               occurred_at=NOW - timedelta(days=400))
    low = tell(c, "S2", "Le membre préfère être appelé le matin.", importance=0.01)
    status = retention.set_legal_hold(c.deps, tenant="acme", subject_id="S2", reference="LIT-2026-014")
    assert status.legal_hold and status.hold_reference == "LIT-2026-014" and status.hold_since is not None
    report = maintain(later(c, 365))
    assert report.tenants["acme"].held == 1 and report.totals() == {}
    scope = scope_for(c.deps, "acme", "S2")
    assert raw(c).count(scope, where=EVERY) == 2

    assert not retention.clear_legal_hold(c.deps, tenant="acme", subject_id="S2").legal_hold
    report = maintain(later(c, 365))
    assert report.tenants["acme"].deleted == {"decay": 1, "retention": 1}
    assert raw(c).get(scope, [old, low]) == []


def test_hold_and_relationship_end_need_a_known_subject_and_clean_input(c: Container) -> None:
    with pytest.raises(SubjectNotFound):
        retention.set_legal_hold(c.deps, tenant="acme", subject_id="NOBODY")
    tell(c, "S5", "Le membre a un contrat habitation.")
    with pytest.raises(InvalidInput):
        retention.set_legal_hold(c.deps, tenant="acme", subject_id="S5", reference="Jean Dupont, litige")
    with pytest.raises(InvalidInput):
        retention.set_relationship_end(c.deps, tenant="acme", subject_id="S5", ended_at=datetime(2026, 1, 1))
    with pytest.raises(SubjectNotFound):  # the same subject id in another tenant is another subject
        retention.retention_status(c.deps, tenant="other", subject_id="S5")


def test_relationship_end_classes_count_from_the_end_never_while_open(c: Container) -> None:
    aml = tell(c, "S3", "Justificatif de revenus fourni pour l'ouverture du compte.", retention="aml",
               occurred_at=NOW - timedelta(days=3000))
    scope = scope_for(c.deps, "acme", "S3")
    assert raw(c).get(scope, [aml])[0].expires_at is None
    assert maintain(later(c, 10_000)).totals() == {}  # relationship open: kept

    ended = retention.set_relationship_end(c.deps, tenant="acme", subject_id="S3", ended_at=NOW)
    assert ended.relationship_end == NOW
    assert maintain(later(c, 1825)).totals() == {}
    assert maintain(later(c, 1827)).tenants["acme"].deleted == {"relationship_end": 1}
    assert raw(c).get(scope, [aml]) == []
    assert c.deps.catalog.history(scope, aml)[-1].detail == {"reason": "relationship_end", "retention": "aml"}


def test_decay_forgets_unimportant_untouched_records_and_their_superseded_past(c: Container) -> None:
    lyon = tell(c, "S4", "Le membre habite à Lyon 7e.", occurred_at=NOW - timedelta(days=10))
    moved = tell(c, "S4", "Le membre habite maintenant à Villeurbanne.", importance=0.05)
    read = tell(c, "S4", "Le membre a un chien.", importance=0.05)
    important = tell(c, "S4", "Le membre a un contrat auto formule Tiers.")
    scope = scope_for(c.deps, "acme", "S4")
    assert raw(c).get(scope, [lyon])[0].superseded_by == moved
    c.deps.index.record_access(scope, [AccessUpdate(read, 1, NOW + timedelta(days=100))])

    assert maintain(later(c, 119)).totals() == {}
    report = maintain(later(c, 121))
    assert report.tenants["acme"].deleted == {"decay": 1, "superseded_orphan": 1}
    assert {m.id for m in raw(c).get(scope, [lyon, moved, read, important])} == {read, important}
    assert c.deps.catalog.history(scope, lyon)[-1].detail["reason"] == "superseded_orphan"


def test_retention_classes_are_the_tenants_own(c: Container) -> None:
    with pytest.raises(InvalidInput, match="unknown retention class"):
        tell(c, "S6", "Prospect intéressé par l'assurance auto.", tenant="other", retention="call_note")
    with pytest.raises(InvalidInput, match="unknown retention class"):  # acme has its own classes, not "*"
        tell(c, "S6", "Prospect intéressé par l'assurance auto.", retention="prospect")
    at = NOW - timedelta(days=5)
    mid = tell(c, "S6", "Prospect intéressé par l'assurance auto.", tenant="other", retention="prospect",
               occurred_at=at)
    stored = raw(c).get(scope_for(c.deps, "other", "S6"), [mid])[0]
    assert stored.retention == "prospect" and stored.expires_at == at + timedelta(days=1095)
    tell(c, "S6", "Le membre a un contrat auto.")  # acme has a subject now
    assert set(maintain(later(c, 1091), tenant="acme").tenants) == {"acme"}  # an admin key's own tenant
    report = maintain(later(c, 1091))
    assert report.tenants["other"].deleted == {"retention": 1} and report.tenants["acme"].deleted == {}


def test_a_failing_subject_is_counted_and_the_pass_goes_on(c: Container, monkeypatch: pytest.MonkeyPatch) -> None:
    from carnet.errors import DependencyUnavailable

    tell(c, "S7", "Appel du membre.", retention="call_note", occurred_at=NOW - timedelta(days=300))
    tell(c, "S8", "Appel du membre.", retention="call_note", occurred_at=NOW - timedelta(days=300))
    broken = scope_for(c.deps, "acme", "S7")
    original = c.deps.catalog.subject_retention

    def flaky(scope: Scope) -> SubjectRetention:
        if scope == broken:
            raise DependencyUnavailable("catalog unavailable")
        return original(scope)

    monkeypatch.setattr(c.deps.catalog, "subject_retention", flaky)
    report = maintain(c.deps)
    assert report.tenants["acme"].failed == 1 and report.tenants["acme"].deleted == {"retention": 1}
    assert maintain(c.deps, stop=lambda: True).interrupted


@pytest.mark.parametrize("error", [RuntimeError("bug"), ValueError("year 0 is out of range")])
def test_any_exception_on_a_subject_or_tenant_is_counted_and_later_ones_are_processed(
        c: Container, monkeypatch: pytest.MonkeyPatch, error: Exception) -> None:
    for tenant, subject in (("acme", "S1"), ("acme", "S2"), ("beta", "S3"), ("gamma", "S4")):
        tell(c, subject, "Appel du prospect.", tenant=tenant, occurred_at=NOW - timedelta(days=1200),
             retention="call_note" if tenant == "acme" else "prospect")
    broken = scope_for(c.deps, "acme", "S1")
    subject_retention, registered_subjects = c.deps.catalog.subject_retention, c.deps.catalog.registered_subjects

    def flaky_subject(scope: Scope) -> SubjectRetention:
        if scope == broken:
            raise error
        return subject_retention(scope)

    def flaky_tenant(tenant: str) -> list[Any]:
        if tenant == "beta":
            raise error
        return registered_subjects(tenant)

    monkeypatch.setattr(c.deps.catalog, "subject_retention", flaky_subject)
    monkeypatch.setattr(c.deps.catalog, "registered_subjects", flaky_tenant)
    report = maintain(c.deps)
    assert report.tenants["acme"].as_dict() == {"subjects": 2, "held": 0, "failed": 1, "unreadable": 0,
                                                "deleted": {"retention": 1}}
    assert report.tenants["beta"].failed == 1
    assert report.tenants["gamma"].deleted == {"retention": 1} and report.compacted


@pytest.mark.slow
def test_cli_maintain_refuses_while_the_store_is_held_then_reports(tmp_path: Path, embedder: Embedder) -> None:
    settings = settings_for(tmp_path)
    c = build(settings, embedder=embedder)
    tell(c, "S1", "Appel du membre pour un devis habitation.", retention="call_note",
         occurred_at=NOW - timedelta(days=200))
    tell(c, "S1", "Le membre a un contrat auto formule Tiers.")
    runner = CliRunner()
    env = {"CARNET_KEY_DIR": str(settings.resolved_key_dir), "CARNET_RETENTION": json.dumps(RETENTION)}
    args = ["maintain", "--data-dir", str(settings.data_dir)]
    held = runner.invoke(app, args, env=env)
    assert held.exit_code == 2 and "held by another process" in held.output
    c.close()
    dry = runner.invoke(app, [*args, "--dry-run"], env=env)
    assert dry.exit_code == 0, dry.output
    assert "would delete 1 record(s) (retention 1)" in dry.stdout
    done = runner.invoke(app, [*args, "--json"], env=env)
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert report["deleted"] == {"retention": 1} and report["tenants"]["acme"]["subjects"] == 1
    assert report["compacted"] and not report["dry_run"]
    assert "maintain acme: 1/1 subjects" in done.stderr


def test_the_server_scheduler_runs_maintenance_and_backups_then_stops(tmp_path: Path, embedder: Embedder) -> None:
    from carnet.bootstrap.ops import build_scheduler
    from carnet.services.backup.snapshots import list_backups

    settings = settings_for(tmp_path, maintenance={"startup_delay_seconds": 0, "backup_interval_hours": 24})
    c = build(settings, embedder=embedder)
    try:
        note = tell(c, "S1", "Appel du membre pour un devis habitation.", retention="call_note",
                    occurred_at=NOW - timedelta(days=200))
        scheduler = build_scheduler(c)
        scheduler.start()
        deadline = datetime.now(UTC) + timedelta(seconds=60)
        while scheduler.runs["backup"] < 1 and datetime.now(UTC) < deadline:
            time.sleep(0.05)  # polled, with a deadline
        scheduler.stop()
        assert scheduler.runs == {"maintain": 1, "backup": 1} and scheduler.failures == {"maintain": 0, "backup": 0}
        assert raw(c).get(scope_for(c.deps, "acme", "S1"), [note]) == []
        audited = [e.event for e in c.audit.log.entries("acme") if e.event.action == "retention.maintain"]
        assert [(e.actor, e.detail["retention"], e.subject) for e in audited] == [("scheduler:maintain", 1, None)]
        assert c.deps.catalog.history(scope_for(c.deps, "acme", "S1"), note)[-1].actor == "scheduler:maintain"
        backups = list_backups(directory=settings.resolved_backup_dir)
        assert len(backups) == 1 and backups[0].manifest is not None
        assert set(json.loads((settings.data_dir / "scheduler.json").read_text())) == {"maintain", "backup"}
    finally:
        c.close()


def test_no_scheduler_with_a_qdrant_server_or_when_disabled(tmp_path: Path, embedder: Embedder) -> None:
    from carnet.bootstrap.ops import build_scheduler

    c = build(settings_for(tmp_path, maintenance={"scheduler": False}), embedder=embedder)
    try:
        assert build_scheduler(c).runs == {}
    finally:
        c.close()


def test_a_default_embedded_server_schedules_a_daily_backup(tmp_path: Path, embedder: Embedder) -> None:
    """Issue 13 (defect 10): nothing to set for a store on embedded defaults to have backups; 0 turns them off."""
    from carnet.bootstrap.ops import build_scheduler

    c = build(settings_for(tmp_path), embedder=embedder)
    try:
        scheduler = build_scheduler(c)
        assert set(scheduler.runs) == {"maintain", "backup"}
        assert scheduler.first_due()["backup"] <= time.time() + 24 * 3600 + 1
    finally:
        c.close()
    c = build(settings_for(tmp_path, maintenance={"backup_interval_hours": 0}), embedder=embedder)
    try:
        assert set(build_scheduler(c).runs) == {"maintain"}
    finally:
        c.close()
