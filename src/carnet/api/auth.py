"""Bearer API keys. The tenant of every request is the key's tenant, never anything in the request."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Request

from carnet.bootstrap import Container
from carnet.services.apikeys import Principal, authenticate


def container(request: Request) -> Container:
    c: Container = request.app.state.container
    return c


def principal(
    request: Request, authorization: Annotated[str | None, Header()] = None
) -> Principal:
    c = container(request)
    token = None
    if authorization and authorization[:7].lower() == "bearer ":
        token = authorization[7:].strip()
    p = authenticate(c.deps.catalog, c.pepper, token)
    request.state.key_id = p.key_id
    return p


def agent(p: Annotated[Principal, Depends(principal)]) -> Principal:
    p.require("agent")
    return p


Agent = Annotated[Principal, Depends(agent)]
Ctr = Annotated[Container, Depends(container)]


def hidden(c: Container, who: Principal) -> tuple[str, ...]:
    """The special categories this key may not read (its tenant's policy and its roles)."""
    return c.deps.special.hidden_for(who.tenant, who.roles)
