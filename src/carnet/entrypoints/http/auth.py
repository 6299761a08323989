"""Bearer API keys. The tenant of every request is the key's tenant, never anything in the request.

Authentication (401) and the key's request budget (429) are the gate's (``carnet.entrypoints.http.gate``),
before the body is read; this dependency hands routes the principal the gate stored, and fails
closed when there is none. Roles (403) are checked by the facade's door for each use case, admin
routes included (``carnet.services.door``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from carnet.bootstrap.container import Container
from carnet.entrypoints.mcp.auth import STATE_KEY
from carnet.errors import Unauthenticated
from carnet.services.apikeys import Principal
from carnet.services.facade import Facade

_bearer = HTTPBearer(auto_error=False, description="An API key: `Authorization: Bearer crn_<id>_<secret>`.")


# The dependencies are ``async def``: they only read the request, and FastAPI runs a plain ``def``
# dependency in its thread pool, a thread hop per dependency per request on the hot path.
async def container(request: Request) -> Container:
    c: Container = request.app.state.container
    return c


async def principal(
    request: Request, _credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)] = None
) -> Principal:
    """The gate's principal (``_credentials`` only declares the bearer scheme in the OpenAPI schema)."""
    p = request.scope.get("state", {}).get(STATE_KEY)
    if not isinstance(p, Principal):
        raise Unauthenticated("missing or malformed API key")
    return p


async def facade(request: Request) -> Facade:
    c: Container = request.app.state.container
    return c.facade


Who = Annotated[Principal, Depends(principal)]
Ctr = Annotated[Container, Depends(container)]
Api = Annotated[Facade, Depends(facade)]
