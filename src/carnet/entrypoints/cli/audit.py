"""``carnet audit verify`` and ``carnet audit export``: check the hash chains, hand them to a SIEM.

Both act as a local operator of each tenant through the same door as ``GET /api/v1/audit`` and
``/api/v1/audit/verify``: an export is recorded (``audit.read``, with its count) in each chain it
read, once written out; a verification changes nothing."""

from __future__ import annotations

import json
import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from carnet.ports import AuditLog

audit_app = typer.Typer(help="The hash-chained audit trail: verify it, export it for a SIEM.", no_args_is_help=True)

DataDir = Annotated[Path | None, typer.Option("--data-dir", help="Data directory (default ./carnet-data).")]
Tenant = Annotated[str | None, typer.Option(help="One tenant (default: every tenant in the trail).")]


def register(app: typer.Typer) -> None:
    app.add_typer(audit_app, name="audit")


def _open(data_dir: Path | None) -> AuditLog:
    from carnet.bootstrap.offline import open_audit_log
    from carnet.entrypoints.cli.common import reported, settings_for

    with reported():
        return open_audit_log(settings_for(data_dir))


@audit_app.command("verify")
def verify(tenant: Tenant = None, data_dir: DataDir = None) -> None:
    """Walk each tenant's chain and name every altered, missing, reordered or foreign entry. Prints one
    JSON verdict per tenant; exit code 1 if any chain is broken."""
    from carnet.domain.audit import verify as verify_chain

    log = _open(data_dir)
    broken = False
    try:
        for t in [tenant] if tenant else log.tenants():
            verdict = verify_chain(t, log.entries(t), log.head(t))
            broken = broken or not verdict.ok
            typer.echo(json.dumps(verdict.as_dict()))
            for p in verdict.problems:
                typer.echo(f"tenant {t}: entry {p.seq} {p.reason.replace('_', ' ')}", err=True)
    finally:
        log.close()
    if broken:
        raise typer.Exit(1)


@audit_app.command("export")
def export(
    tenant: Tenant = None,
    after_seq: Annotated[int, typer.Option(min=0, max=2**53 - 1, help="Only entries after this sequence number.")] = 0,
    output: Annotated[Path | None, typer.Option(help="Write to this file (default stdout).")] = None,
    data_dir: DataDir = None,
) -> None:
    """Write entries as JSON lines (tenant, seq, at, actor, action, subject hash, targets, outcome,
    detail, prev_hash, hash), in chain order: a SIEM can re-verify the chain it receives. Each chain
    read gets an ``audit.read`` entry (actor ``cli:audit``) once its entries are written."""
    from carnet.bootstrap.container import SystemClock
    from carnet.entrypoints.cli.common import reported
    from carnet.services.audit import AuditTrail
    from carnet.services.door import Door, operator
    from carnet.services.roles import ADMIN

    log = _open(data_dir)
    door = Door(AuditTrail(log, SystemClock()))
    count = 0
    sink = output.open("w", encoding="utf-8") if output else sys.stdout

    def write(t: str) -> int:
        n = 0
        for entry in log.entries(t, after_seq=after_seq):
            sink.write(json.dumps(entry.as_dict(), ensure_ascii=False) + "\n")
            n += 1
        return n

    try:
        with reported():
            for t in [tenant] if tenant else log.tenants():
                count += door.read(operator(t, "cli:audit", ADMIN), "audit.read", (ADMIN,),
                                   partial(write, t), seen=lambda _: (),
                                   detail=lambda n: {"after_seq": after_seq, "count": n}, at_once=True)
    finally:
        if output:
            sink.close()
        log.close()
    typer.echo(f"exported {count} entries", err=True)
