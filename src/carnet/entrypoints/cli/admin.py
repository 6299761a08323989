"""``carnet apikey``, ``carnet keys``, ``carnet tenant`` and ``carnet subject``: a tenant's keys and its
subjects' erasure, from the operator's shell, through the same door as the admin API."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from carnet.entrypoints.cli import values
from carnet.entrypoints.cli.common import DataDir, audited, configure_logs, reported, settings_for
from carnet.settings.stores import CatalogBackend
from carnet.settings.where import key_command, shown_path, store_named

if TYPE_CHECKING:
    from carnet.bootstrap.container import ControlPlane
    from carnet.services.admin import Admin
    from carnet.services.audit import AuditTrail
    from carnet.settings.root import Settings

apikey_app = typer.Typer(help="Manage API keys.", no_args_is_help=True)
keys_app = typer.Typer(help="Tenant key rotation (the KMS and the key store; no downtime).", no_args_is_help=True)
tenant_app = typer.Typer(help="Tenant-wide operations.", no_args_is_help=True)
subject_app = typer.Typer(help="Data subjects: erasure (GDPR art. 17).", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(apikey_app, name="apikey")
    app.add_typer(keys_app, name="keys")
    app.add_typer(tenant_app, name="tenant")
    app.add_typer(subject_app, name="subject")


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

    settings = settings_for(data_dir)
    store = store_named(settings)
    new_store = settings.catalog is CatalogBackend.SQLITE and not settings.data_dir.exists()
    with reported():
        who = operator(tenant, "cli:apikey", "admin", *role)  # the host's operator grants any role
        with _admin(settings) as admin:
            key, record = admin.create_key(who, roles=role, rate_limit=rate_limit, name=name)
    if new_store:  # on stderr: the key stays the last line of stdout
        typer.echo(new_store_warning(settings, tenant=tenant, roles=role), err=True)
    typer.echo(f"created key {record.key_id} for tenant {record.tenant} with roles {', '.join(record.roles)} "
               f"in {store}")
    typer.echo("store it now: it cannot be shown again")
    typer.echo(key)


def new_store_warning(settings: Settings, *, tenant: str, roles: list[str]) -> str:
    """Said when ``apikey create`` made a store that did not exist: a server started on another one (the
    demo's ./carnet-demo) answers ``unknown or revoked API key`` to this key."""
    demo = Path("carnet-demo")
    also = (f" For the demo's server (`carnet serve --demo`, scripts/run.sh), whose store is {shown_path(demo)}: "
            + key_command(settings.model_copy(update={"data_dir": demo}), tenant=tenant, roles=roles)
            if demo.is_dir() and demo.resolve() != settings.data_dir.resolve() else "")
    return (f"warning: there was no store at {shown_path(settings.data_dir)}; a new, empty one was made there for "
            f"this key. A server knows only the keys of the store it reads (its --data-dir).{also}")


@apikey_app.command("revoke")
def apikey_revoke(
    key_id: Annotated[str, typer.Argument(help="The key id (the 12 hex digits after 'crn_').")],
    data_dir: DataDir = None,
) -> None:
    """Revoke a key at once: the next request with it gets 401. Works while `carnet serve` runs."""
    from carnet.services.apikeys import key_owner
    from carnet.services.audit import SYSTEM_CHAIN
    from carnet.services.door import operator

    settings = settings_for(data_dir)
    with reported(), _admin(settings) as admin:
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

    from carnet.entrypoints.presenters.admin import api_key_out
    from carnet.entrypoints.presenters.plain import as_json

    settings = settings_for(data_dir)
    with reported(), _control_plane(settings) as (plane, _):
        for k in plane.catalog.api_keys(tenant):
            typer.echo(json.dumps(as_json(api_key_out(k))))  # the REST API's shape


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
    from carnet.bootstrap.stores import build_control_plane
    from carnet.bootstrap.wiring import build_audit

    plane = build_control_plane(settings)
    audit = build_audit(settings)
    try:
        yield plane, audit
    finally:
        audit.stop()
        audit.log.close()
        plane.catalog.close()


def _keyring(settings: Settings):  # type: ignore[no-untyped-def]
    from carnet.bootstrap.keys import build_keyring, build_kms

    kms = build_kms(settings)
    return kms, build_keyring(settings, kms)


@keys_app.command("rotate")
def keys_rotate(
    tenant: Annotated[str, typer.Option(help="Tenant whose key-encryption key gets a new version.")],
    data_dir: DataDir = None,
) -> None:
    """Create a new version of the tenant's key in the KMS. Existing data keys keep working; run
    `carnet keys rewrap` next to move them to it."""
    from carnet.services.lifecycle.keys import rotate

    settings = settings_for(data_dir)
    configure_logs(settings)
    with reported(), audited(settings, tenant, "key.rotate"):
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

    from carnet.services.lifecycle.keys import rewrap

    settings = settings_for(data_dir)
    configure_logs(settings)
    with reported(), audited(settings, tenant, "key.rewrap", {"retire": retire}):
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

    from carnet.bootstrap.ops import build_rehasher
    from carnet.bootstrap.wiring import build
    from carnet.errors import StoreLocked
    from carnet.services.lifecycle.rehash import rehash_tenant

    settings = settings_for(data_dir)
    configure_logs(settings)

    def progress(done: int, total: int) -> None:
        if done == total or done % max(1, total // 20) == 0:
            typer.echo(f"rehash {tenant}: {done}/{total} subjects", err=True)

    with reported():
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

    from carnet.bootstrap.keys import build_key_invalidations, build_keyring, build_kms
    from carnet.bootstrap.stores import build_erasure_ledger
    from carnet.errors import InvalidInput
    from carnet.services.lifecycle.keys import shred_tenant

    def confirmed() -> None:  # refused like any rule: one `refused` entry in the tenant's chain
        if confirm != tenant:
            raise InvalidInput(f"refused: this destroys every record of tenant {tenant!r} for good; "
                               f"repeat the tenant name with --confirm {tenant}")

    settings = settings_for(data_dir)
    configure_logs(settings)
    with reported(), audited(settings, tenant, "tenant.shred", check=confirmed):
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

    from carnet.bootstrap.wiring import build
    from carnet.errors import CarnetError, StoreLocked
    from carnet.services.door import operator

    settings = settings_for(data_dir)
    configure_logs(settings)
    with reported():
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
