"""Administration of a tenant (role ``admin``): its API keys and maintenance. An admin key acts on its
own tenant only."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Response
from pydantic import BaseModel, ConfigDict, Field, StrictBool

from carnet.api.auth import Api, Ctr, Who
from carnet.api.responses import ApiKeysOut, MaintainOut, NewApiKeyOut
from carnet.domain.values import Label, RateLimit
from carnet.ports import ApiKeyRecord
from carnet.services.apikeys import create_key, revoke_key

router = APIRouter(prefix="/api/v1/admin", tags=["admin"])


class NewKey(BaseModel):
    model_config = ConfigDict(extra="forbid")

    roles: list[Annotated[Label, Field(max_length=16)]] = Field(min_length=1, max_length=3, examples=[["agent"]])
    rate_limit: RateLimit | None = None
    name: Annotated[Label, Field(max_length=64)] | None = Field(None, examples=["ivr-bot"])


def _key_json(r: ApiKeyRecord) -> dict[str, Any]:
    return {"key_id": r.key_id, "tenant": r.tenant, "roles": list(r.roles), "created_at": r.created_at.isoformat(),
            "revoked": r.revoked, "rate_limit": r.rate_limit, "name": r.name}


class MaintainBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    dry_run: StrictBool = Field(False, description="Count what would be deleted, delete nothing.")


@router.post("/maintain", response_model=MaintainOut)
def maintain(who: Who, api: Api, body: MaintainBody | None = None) -> dict[str, object]:
    """Retention and decay for the key's tenant now (the scheduler and `carnet maintain` also compact)."""
    return api.maintain(who, dry_run=body.dry_run if body else False).as_dict()


@router.get("/apikeys", response_model=ApiKeysOut)
def list_keys(who: Who, c: Ctr) -> dict[str, Any]:
    who.require("admin")
    return {"items": [_key_json(r) for r in c.deps.catalog.api_keys(who.tenant)]}


@router.post("/apikeys", status_code=201, response_model=NewApiKeyOut)
def new_key(body: NewKey, who: Who, c: Ctr) -> dict[str, Any]:
    """A new key of the caller's tenant. The key is in this answer only: store it now."""
    who.require("admin")
    event = c.audit.event(tenant=who.tenant, actor=who.key_id, action="apikey.create",
                          detail={"roles": ",".join(body.roles)})
    with c.audit.recorded(event):
        key, record = create_key(c.deps.catalog, c.pepper, tenant=who.tenant, roles=body.roles,
                                 rate_limit=body.rate_limit, name=body.name)
    return {**_key_json(record), "key": key}


@router.delete("/apikeys/{key_id}", status_code=204)
def revoke(key_id: Annotated[str, Path(pattern=r"^[0-9a-f]{12}$")], who: Who, c: Ctr) -> Response:
    """Revoke at once: the next request with that key gets 401."""
    who.require("admin")
    event = c.audit.event(tenant=who.tenant, actor=who.key_id, action="apikey.revoke", targets=(key_id,))
    with c.audit.recorded(event):
        revoke_key(c.deps.catalog, key_id=key_id, tenant=who.tenant)
    return Response(status_code=204)
