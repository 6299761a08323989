"""The audit trail on its real SQLite file: chained across processes' connections, tamper-evident
through `carnet audit verify`, exported as JSON lines, and a write without its entry refused."""

from __future__ import annotations

import itertools
import json
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from carnet.adapters.sqlite.audit import SqliteAuditLog
from carnet.bootstrap.container import Container
from carnet.domain.audit import AuditEvent, verify
from carnet.domain.records import Scope
from carnet.entrypoints.cli.main import app
from carnet.errors import AuditUnavailable
from carnet.ports import RecordFilter
from carnet.services.apikeys import authenticate, create_key
from carnet.services.memories.recall import Query
from carnet.services.memories.remember import NewMemory

runner = CliRunner()


def _event(tenant: str, n: int) -> AuditEvent:
    return AuditEvent(tenant=tenant, actor="k1", action="memory.write", at=datetime.now(UTC), subject=f"h{n}",
                      detail={"count": n})


def _trail(tmp_path: Path, n: int = 6) -> Path:
    path = tmp_path / "audit.sqlite3"
    log = SqliteAuditLog(path)
    log.append([_event("t1", i) for i in range(n)])
    log.append([_event("t2", 0)])
    log.close()
    return path


def _verify(path: Path) -> tuple[int, str]:
    result = runner.invoke(app, ["audit", "verify", "--data-dir", str(path.parent)])
    return result.exit_code, result.output


def test_two_writers_share_one_unforked_chain(tmp_path: Path) -> None:
    path = tmp_path / "audit.sqlite3"
    logs = [SqliteAuditLog(path), SqliteAuditLog(path)]  # as `serve` and a CLI command would

    def write(log: SqliteAuditLog) -> None:
        for i in range(50):
            log.append([_event("t1", i)])

    threads = [threading.Thread(target=write, args=(log,)) for log in logs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    verdict = verify("t1", logs[0].entries("t1"), logs[0].head("t1"))
    assert verdict.ok and verdict.entries == 100
    for log in logs:
        log.close()


def test_verify_passes_on_an_intact_trail(tmp_path: Path) -> None:
    code, output = _verify(_trail(tmp_path))
    assert code == 0 and output.count('"ok": true') == 2


@pytest.mark.parametrize(("tamper", "named"), [
    ("UPDATE audit SET actor = 'intruder' WHERE tenant = 't1' AND seq = 3", "entry 3 altered"),
    ("DELETE FROM audit WHERE tenant = 't1' AND seq = 2", "entry 2 missing"),
    ("DELETE FROM audit WHERE tenant = 't1' AND seq = 6", "entry 6 missing"),
    ("UPDATE audit SET seq = -1 WHERE tenant = 't1' AND seq = 2; UPDATE audit SET seq = 2 WHERE tenant = 't1'"
     " AND seq = 4; UPDATE audit SET seq = 4 WHERE tenant = 't1' AND seq = -1", "entry 2 altered"),
    ("UPDATE audit SET tenant = 't2', seq = 2 WHERE tenant = 't1' AND seq = 5", "entry 5 missing"),
])
def test_verify_names_the_altered_removed_or_reordered_entry(tmp_path: Path, tamper: str, named: str) -> None:
    path = _trail(tmp_path)
    with sqlite3.connect(path) as db:
        db.executescript(tamper)
    code, output = _verify(path)
    assert code == 1 and f"tenant t1: {named}" in output, output


def test_export_writes_json_lines_a_siem_can_rechain(tmp_path: Path) -> None:
    path = _trail(tmp_path)
    out = tmp_path / "siem.jsonl"
    result = runner.invoke(app, ["audit", "export", "--tenant", "t1", "--output", str(out),
                                 "--data-dir", str(path.parent)])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [e["seq"] for e in lines] == [1, 2, 3, 4, 5, 6]
    assert all(b["prev_hash"] == a["hash"] for a, b in itertools.pairwise(lines))


def test_reads_are_audited_in_batches_and_writes_at_once(container: Container) -> None:
    key, record = create_key(container.deps.catalog, container.pepper, tenant="t1", roles=["agent"])
    who = authenticate(container.deps.catalog, container.pepper, key)
    facade = container.facade
    facade.remember(who, subject_id="M-1", items=[NewMemory("Le membre a un contrat auto.")])
    written = [e.event.action for e in container.audit.log.entries("t1")]
    assert written == ["memory.write"]  # on disk before remember returned
    hits = facade.search(who, subject_id="M-1", query=Query("contrat"))
    container.audit.flush()
    entries = list(container.audit.log.entries("t1"))
    assert entries[-1].event.action == "memory.search"
    assert entries[-1].event.targets == tuple(h.memory.id for h in hits) and entries[-1].event.actor == record.key_id
    assert entries[-1].event.subject == container.deps.hasher.subject_hash("t1", "M-1")


def test_a_write_whose_audit_entry_cannot_be_stored_fails(container: Container) -> None:
    key, _ = create_key(container.deps.catalog, container.pepper, tenant="t1", roles=["agent"])
    who = authenticate(container.deps.catalog, container.pepper, key)
    log = container.audit.log
    assert isinstance(log, SqliteAuditLog)
    log._db.execute("PRAGMA query_only = 1")  # the audit file refuses writes from now on
    with pytest.raises(AuditUnavailable):
        container.facade.remember(who, subject_id="M-2", items=[NewMemory("Le membre a un contrat moto.")])
    log._db.execute("PRAGMA query_only = 0")
    scope = Scope("t1", container.deps.hasher.subject_hash("t1", "M-2"))
    assert container.deps.index.count(scope, where=RecordFilter(statuses=None)) == 0
    assert not container.deps.catalog.is_registered(scope)
