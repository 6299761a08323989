"""The ``carnet`` command line. Each command builds what it needs through ``carnet.bootstrap``."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from carnet import cli_values as values
from carnet.config import Settings

if TYPE_CHECKING:
    from carnet.bootstrap import ControlPlane
    from carnet.services.admin import Admin
    from carnet.services.audit import AuditTrail

app = typer.Typer(help="Carnet: sovereign long-term memory for LLM assistants.", no_args_is_help=True)
apikey_app = typer.Typer(help="Manage API keys.", no_args_is_help=True)
app.add_typer(apikey_app, name="apikey")
keys_app = typer.Typer(help="Tenant key rotation (the KMS and the key store; no downtime).", no_args_is_help=True)
app.add_typer(keys_app, name="keys")
tenant_app = typer.Typer(help="Tenant-wide operations.", no_args_is_help=True)
app.add_typer(tenant_app, name="tenant")
subject_app = typer.Typer(help="Data subjects: erasure (GDPR art. 17).", no_args_is_help=True)
app.add_typer(subject_app, name="subject")



@app.callback()
def _entry() -> None:
    # Before any command: what Carnet (and the libraries it drives) creates is private to this user,
    # even when run by hand under umask 022 (carnet.private_fs).
    from carnet.private_fs import restrict_umask

    restrict_umask()


DataDir = Annotated[Path | None, typer.Option("--data-dir", help="Data directory (default ./carnet-data).")]


def _settings(data_dir: Path | None = None, **overrides: object) -> Settings:
    """The settings, or exit 2 naming each refused setting and why (never its value: it may be a secret)."""
    from pydantic import ValidationError

    values: dict[str, object] = {k: v for k, v in overrides.items() if v is not None}
    if data_dir is not None:
        values["data_dir"] = data_dir
    try:
        return Settings(**values)  # type: ignore[arg-type]
    except ValidationError as exc:
        for err in exc.errors(include_input=False, include_url=False):
            where = "__".join(str(p) for p in err["loc"]).upper()
            typer.echo(f"error: settings: {'CARNET_' + where + ': ' if where else ''}{err['msg']}", err=True)
        raise typer.Exit(2) from None


@contextmanager
def _reported() -> Iterator[None]:
    """A Carnet error ends the command with its message on stderr and exit code 2 (no traceback)."""
    from carnet.errors import CarnetError

    try:
        yield
    except CarnetError as exc:
        typer.echo(f"error: {exc.message}", err=True)
        raise typer.Exit(2) from exc


def _configure_logs(settings: Settings) -> None:
    from carnet.logs import configure

    configure(settings.log_level)


@app.command()
def serve(
    data_dir: DataDir = None,
    host: Annotated[str | None, typer.Option(help="Interface to listen on (default 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option(min=1, max=65535, help="Port (default 8080).")] = None,
    demo: Annotated[bool, typer.Option("--demo", help=(
        "Serve the demo's own store (./carnet-demo unless --data-dir; never CARNET_DATA_DIR), seeded with the "
        "demo story and key the first time."))] = False,
) -> None:
    """Run the API server on embedded defaults. It owns the vector store while it runs."""
    import uvicorn

    from carnet.api.app import create_app
    from carnet.api.tls import uvicorn_tls_options
    from carnet.bootstrap import build, start_workers
    from carnet.bootstrap_ops import build_scheduler
    from carnet.errors import CarnetError

    settings = _settings(data_dir, host=host, port=port)
    if demo:  # its own store (./carnet-demo unless --data-dir), seeded once; never the real data dir
        from carnet.demo import demo_settings

        settings = demo_settings(settings, data_dir)
    _configure_logs(settings)
    if demo and settings.tls.enabled:
        typer.echo("error: --demo talks plain http to the server; run it without CARNET_TLS__CERT_FILE", err=True)
        raise typer.Exit(2)
    try:
        container = build(settings)
    except CarnetError as exc:
        typer.echo(f"error: {exc.message}", err=True)
        raise typer.Exit(2) from exc
    application = create_app(container)
    # Everything built so far lives as long as the process: move it out of the collector's way so
    # collections during requests stay short (they show in assemble's p99 otherwise).
    gc.collect()
    gc.freeze()
    if demo:
        from carnet.demo import run_against_server_when_ready

        run_against_server_when_ready(container, settings)
    scheduler = build_scheduler(container)  # retention, decay (and backups) in-process: embedded store only
    scheduler.start()
    if settings.workers.in_process:  # intakes: the embedded shard has one owner, so its workers live here
        container.facade.on_intake = start_workers(container).wake
    try:
        # proxy_headers=False: the client's address is the peer's, or what CARNET_API__TRUSTED_PROXIES
        # allow X-Forwarded-For to say (carnet.api.client_address), never uvicorn's own default trust.
        uvicorn.run(application, host=settings.host, port=settings.port, access_log=False, log_config=None,
                    proxy_headers=False, **uvicorn_tls_options(settings.tls))  # CARNET_TLS__*: https
    finally:
        scheduler.stop()
        container.close()


@apikey_app.command("create")
def apikey_create(
    tenant: Annotated[str, typer.Option(help="Tenant the key belongs to.", callback=values.label)],
    role: Annotated[list[str], typer.Option(help="Role (repeatable): agent, dpo, admin, supervisor.",
                                            callback=values.labels)],
    rate_limit: Annotated[str | None, typer.Option(
        help="This key's request budget: a positive amount per a positive period, e.g. '50/second' "
             "(default: CARNET_API__RATE_LIMIT).", callback=values.rate)] = None,
    name: Annotated[str | None, typer.Option(help="A label for operators, e.g. 'ivr-bot'.",
                                             callback=values.label)] = None,
    data_dir: DataDir = None,
) -> None:
    """Create an API key. The key is printed once, as the last line; only its hash is stored."""
    from carnet.services.door import operator

    settings = _settings(data_dir)
    with _reported():
        who = operator(tenant, "cli:apikey", "admin")
        with _admin(settings) as admin:
            key, record = admin.create_key(who, roles=role, rate_limit=rate_limit, name=name)
    typer.echo(f"created key {record.key_id} for tenant {record.tenant} with roles {', '.join(record.roles)}")
    typer.echo("store it now: it cannot be shown again")
    typer.echo(key)


@apikey_app.command("revoke")
def apikey_revoke(
    key_id: Annotated[str, typer.Argument(help="The key id (the 12 hex digits after 'crn_').")],
    data_dir: DataDir = None,
) -> None:
    """Revoke a key at once: the next request with it gets 401. Works while `carnet serve` runs."""
    from carnet.services.apikeys import key_owner
    from carnet.services.audit import SYSTEM_CHAIN
    from carnet.services.door import operator

    settings = _settings(data_dir)
    with _reported(), _admin(settings) as admin:
        # the key's own tenant acts on it; an unknown key is refused in the store-wide chain
        who = operator(key_owner(admin.catalog, key_id) or SYSTEM_CHAIN, "cli:apikey", "admin")
        admin.revoke_key(who, key_id=key_id)
    typer.echo(f"revoked key {key_id}")


@apikey_app.command("list")
def apikey_list(
    tenant: Annotated[str | None, typer.Option(help="Only this tenant's keys.")] = None,
    data_dir: DataDir = None,
) -> None:
    """The keys (never the secrets): id, tenant, roles, created, revoked, rate limit, name."""
    import json

    settings = _settings(data_dir)
    with _reported(), _control_plane(settings) as (plane, _):
        for k in plane.catalog.api_keys(tenant):
            typer.echo(json.dumps({"key_id": k.key_id, "tenant": k.tenant, "roles": list(k.roles),
                                   "created_at": k.created_at.isoformat(), "revoked": k.revoked,
                                   "rate_limit": k.rate_limit, "name": k.name}))


@contextmanager
def _audited(settings: Settings, tenant: str, action: str,
             detail: dict[str, str | int | bool] | None = None, *,
             check: Callable[[], object] | None = None) -> Iterator[None]:
    """An admin command through the door, as a local operator (actor ``cli:<noun>``): ``check`` refuses
    it with one ``refused`` entry; otherwise its entry is stored before it runs (and a ``failed`` one
    if it fails)."""
    from carnet.bootstrap import build_audit
    from carnet.services.door import Door, operator

    who = operator(tenant, "cli:" + action.split(".")[0], "admin")
    audit = build_audit(settings)
    try:
        with Door(audit).write(who, action, ("admin",), check=check, detail=detail):
            yield
    finally:
        audit.stop()
        audit.log.close()


@contextmanager
def _admin(settings: Settings) -> Iterator[Admin]:
    """Key administration through the same door as ``/api/v1/admin/apikeys`` (roles, checks, audit),
    on the control plane only: it works beside a running `carnet serve`."""
    from carnet.services.admin import Admin
    from carnet.services.door import Door

    with _control_plane(settings) as (plane, audit):
        yield Admin(Door(audit), plane.catalog, plane.pepper)


@contextmanager
def _control_plane(settings: Settings) -> Iterator[tuple[ControlPlane, AuditTrail]]:
    """The catalog and the audit trail, without the vector store (these commands run beside `serve`)."""
    from carnet.bootstrap import build_audit, build_control_plane

    plane = build_control_plane(settings)
    audit = build_audit(settings)
    try:
        yield plane, audit
    finally:
        audit.stop()
        audit.log.close()
        plane.catalog.close()


def _keyring(settings: Settings):  # type: ignore[no-untyped-def]
    from carnet.bootstrap import build_keyring, build_kms

    kms = build_kms(settings)
    return kms, build_keyring(settings, kms)


@keys_app.command("rotate")
def keys_rotate(
    tenant: Annotated[str, typer.Option(help="Tenant whose key-encryption key gets a new version.")],
    data_dir: DataDir = None,
) -> None:
    """Create a new version of the tenant's key in the KMS. Existing data keys keep working; run
    `carnet keys rewrap` next to move them to it."""
    from carnet.services.keys import rotate

    settings = _settings(data_dir)
    _configure_logs(settings)
    with _reported(), _audited(settings, tenant, "key.rotate"):
        kms, _ = _keyring(settings)
        version = rotate(kms, tenant=tenant)
    typer.echo(f"tenant {tenant}: key version {version}")


@keys_app.command("rewrap")
def keys_rewrap(
    tenant: Annotated[str, typer.Option(help="Tenant whose stored data keys are rewrapped.")],
    retire: Annotated[bool, typer.Option("--retire/--keep-old",
                                         help="Then stop older key versions from decrypting.")] = True,
    data_dir: DataDir = None,
) -> None:
    """Rewrap every stored data key of the tenant under the newest key version (the KMS's batch
    rewrap; record ciphertexts are not touched), then retire older versions. Safe while serving."""
    import json

    from carnet.services.keys import rewrap

    settings = _settings(data_dir)
    _configure_logs(settings)
    with _reported(), _audited(settings, tenant, "key.rewrap", {"retire": retire}):
        kms, keyring = _keyring(settings)
        result = rewrap(kms, keyring, tenant=tenant, retire=retire)
    typer.echo(json.dumps(result.as_dict()))


@keys_app.command("rehash")
def keys_rehash(
    tenant: Annotated[str, typer.Option(help="Tenant whose hash key is replaced.")],
    data_dir: DataDir = None,
) -> None:
    """Rotate the tenant's hash key: every subject hash, keyword hash and blind-index token is
    recomputed under a new key (subject ids are read back from the registry, where they are kept
    sealed), then the old key is destroyed. Offline: refuses while `carnet serve` holds the store.
    Interrupted, it can be run again and finishes the work. Prints a JSON report."""
    import json

    from carnet.bootstrap import build
    from carnet.bootstrap_ops import build_rehasher
    from carnet.errors import StoreLocked
    from carnet.services.rehash import rehash_tenant

    settings = _settings(data_dir)
    _configure_logs(settings)

    def progress(done: int, total: int) -> None:
        if done == total or done % max(1, total // 20) == 0:
            typer.echo(f"rehash {tenant}: {done}/{total} subjects", err=True)

    with _reported():
        try:
            container = build(settings)
        except StoreLocked as exc:
            typer.echo(f"error: {exc.message}. Stop the server first: a rehash runs offline.", err=True)
            raise typer.Exit(2) from exc
        try:
            with container.audit.recorded(container.audit.event(tenant=tenant, actor="cli:keys", action="key.rehash")):
                report = rehash_tenant(build_rehasher(container), tenant=tenant, progress=progress)
        finally:
            container.close()
    typer.echo(json.dumps(report.as_dict()))


@tenant_app.command("shred")
def tenant_shred(
    tenant: Annotated[str, typer.Option(help="Tenant whose every record becomes unreadable.")],
    confirm: Annotated[str | None, typer.Option(help="Type the tenant name again to confirm.")] = None,
    data_dir: DataDir = None,
) -> None:
    """Panic purge: destroy the tenant's key in the KMS, then its data keys. Irreversible: every record of
    the tenant becomes unreadable at once, backups included. Needs --confirm with the tenant name."""
    import json

    from carnet.bootstrap import build_erasure_ledger, build_key_invalidations, build_keyring, build_kms
    from carnet.errors import InvalidInput
    from carnet.services.keys import shred_tenant

    def confirmed() -> None:  # refused like any rule: one `refused` entry in the tenant's chain
        if confirm != tenant:
            raise InvalidInput(f"refused: this destroys every record of tenant {tenant!r} for good; "
                               f"repeat the tenant name with --confirm {tenant}")

    settings = _settings(data_dir)
    _configure_logs(settings)
    with _reported(), _audited(settings, tenant, "tenant.shred", check=confirmed):
        invalidations = build_key_invalidations(settings)  # the servers drop the tenant's cached keys
        ledger = build_erasure_ledger(settings)
        try:
            kms = build_kms(settings)
            receipt = shred_tenant(kms, build_keyring(settings, kms, invalidations), tenant=tenant, ledger=ledger)
        finally:
            ledger.close()
            invalidations.close()
    typer.echo(json.dumps(receipt.as_dict()))


@subject_app.command("erase")
def subject_erase(
    tenant: Annotated[str, typer.Option(help="Tenant of the subject.", callback=values.label)],
    subject: Annotated[str, typer.Option(help="The subject id, as the tenant's systems know it.",
                                         callback=values.label)],
    data_dir: DataDir = None,
) -> None:
    """Erase a subject: records, history, then its data key; prints a JSON receipt of what was
    deleted and verified. The same rules as `DELETE /api/v1/subjects/<id>` (it is the same service
    call, as a local dpo): an unknown subject, or one under legal hold, is refused (exit code 2) and
    nothing is erased. Works on the files directly: refuses while `carnet serve` holds the store."""
    import json

    from carnet.bootstrap import build
    from carnet.errors import CarnetError, StoreLocked
    from carnet.services.door import operator

    settings = _settings(data_dir)
    _configure_logs(settings)
    with _reported():
        who = operator(tenant, "cli:subject", "dpo")
    try:
        container = build(settings)
    except StoreLocked as exc:
        typer.echo(f"error: {exc.message}. Stop the server first, or erase through the API while it runs "
                   "(DELETE /api/v1/subjects/<id> with a dpo key).", err=True)
        raise typer.Exit(2) from exc
    try:
        receipt = container.facade.erase(who, subject_id=subject)
    except CarnetError as exc:
        typer.echo(f"error: {exc.message}", err=True)
        raise typer.Exit(2) from exc
    finally:
        container.close()
    typer.echo(json.dumps(receipt.as_dict(), indent=2))
    if not receipt.complete:
        raise typer.Exit(1)


@app.command()
def demo(data_dir: DataDir = None) -> None:
    """A scripted French call-center story about one member, in a temporary store unless --data-dir."""
    from carnet.demo import run_in_process

    run_in_process(data_dir)


def _register_bench() -> None:
    from carnet.bench.cli import bench_app
    from carnet.cli_audit import register as register_audit
    from carnet.cli_backup import register as register_backup
    from carnet.cli_db import register as register_db
    from carnet.cli_intakes import register as register_intakes
    from carnet.cli_maintain import register as register_maintain
    from carnet.cli_mcp import register as register_mcp

    app.add_typer(bench_app, name="bench")
    register_audit(app)
    register_backup(app)
    register_db(app)
    register_intakes(app)
    register_maintain(app)
    register_mcp(app)


_register_bench()

if __name__ == "__main__":  # pragma: no cover
    app()
