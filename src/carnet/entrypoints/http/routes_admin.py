"""Administration of a tenant (role ``admin``): its API keys, maintenance, and backups of the store. An
admin key acts on its own tenant only (a backup covers the whole store but gives the caller nothing of it).
Roles and audit entries are the facade's (``Facade.admin``, ``Facade.maintain``, ``Facade.backup``), as
for every other route: nothing is checked or recorded here."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Response
from pydantic import BaseModel, ConfigDict, Field, StrictBool

from carnet.domain.reconcile.values import Label, RateLimit
from carnet.entrypoints.http.auth import Api, Who
from carnet.entrypoints.presenters.admin import (
    ApiKeysOut,
    BackupOut,
    MaintainOut,
    NewApiKeyOut,
    api_keys_out,
    backup_out,
    maintain_out,
    new_api_key_out,
)

router = APIRouter(prefix="/api/v1/admin", tags=["admin"])


class NewKey(BaseModel):
    model_config = ConfigDict(extra="forbid")

    roles: list[Annotated[Label, Field(max_length=16)]] = Field(min_length=1, max_length=4, examples=[["agent"]])
    rate_limit: RateLimit | None = None
    name: Annotated[Label, Field(max_length=64)] | None = Field(None, examples=["ivr-bot"])


class MaintainBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    dry_run: StrictBool = Field(False, description="Count what would be deleted, delete nothing.")


@router.post("/maintain", response_model=MaintainOut)
def maintain(who: Who, api: Api, body: MaintainBody | None = None) -> MaintainOut:
    """Retention and decay for the key's tenant now (the scheduler and `carnet maintain` also compact)."""
    return maintain_out(api.maintain(who, dry_run=body.dry_run if body else False))


@router.post("/backup", response_model=BackupOut)
def backup(who: Who, api: Api) -> BackupOut:
    """A backup of the whole embedded store now (what the server's scheduler does daily), written by the
    server into its backup dir and pruned to ``CARNET_MAINTENANCE__BACKUP_KEEP``; `carnet backup create`
    asks for one while the server holds the store. The answer names the archive, not where it is."""
    return backup_out(api.backup(who))


@router.get("/apikeys", response_model=ApiKeysOut)
def list_keys(who: Who, api: Api) -> ApiKeysOut:
    return api_keys_out(api.admin.list_keys(who))


@router.post("/apikeys", status_code=201, response_model=NewApiKeyOut)
def new_key(body: NewKey, who: Who, api: Api) -> NewApiKeyOut:
    """A new key of the caller's tenant. The key is in this answer only: store it now."""
    key, record = api.admin.create_key(who, roles=body.roles, rate_limit=body.rate_limit, name=body.name)
    return new_api_key_out(key, record)


@router.delete("/apikeys/{key_id}", status_code=204)
def revoke(key_id: Annotated[str, Path(pattern=r"^[0-9a-f]{12}$")], who: Who, api: Api) -> Response:
    """Revoke at once: the next request with that key gets 401."""
    api.admin.revoke_key(who, key_id=key_id)
    return Response(status_code=204)
