"""Bearer API keys. The tenant of every request is the key's tenant, never anything in the request.

Authentication (401) comes first, then the key's request budget (429); roles (403) are checked by
the facade's door for each use case, admin routes included (``carnet.services.door``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from carnet.bootstrap import Container
from carnet.services.apikeys import Principal, authenticate
from carnet.services.facade import Facade

_bearer = HTTPBearer(auto_error=False, description="An API key: `Authorization: Bearer crn_<id>_<secret>`.")


def container(request: Request) -> Container:
    c: Container = request.app.state.container
    return c


def principal(
    request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)] = None
) -> Principal:
    c = container(request)
    p = authenticate(c.deps.catalog, c.pepper, credentials.credentials if credentials else None)
    request.state.key_id = p.key_id
    request.state.tenant = p.tenant
    c.limiter.hit(p.key_id, p.rate_limit)
    return p


def facade(request: Request) -> Facade:
    return container(request).facade


Who = Annotated[Principal, Depends(principal)]
Ctr = Annotated[Container, Depends(container)]
Api = Annotated[Facade, Depends(facade)]
