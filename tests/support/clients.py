"""Clients of one server on the embedded stack, each with a new key of a tenant for the roles asked."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager

import httpx

from carnet.bootstrap.container import Container
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.server import running
from carnet.services.apikeys import create_key


@contextmanager
def clients_for(container: Container, tenant: str = "assur-nord") -> Iterator[Callable[..., httpx.Client]]:
    """``client(*roles)``: a client of one running server, with a new key of ``tenant`` for those roles;
    every client is closed, then the server stopped, on exit."""
    with running(create_app(container)) as base, ExitStack() as clients:
        def client(*roles: str) -> httpx.Client:
            key, _ = create_key(container.deps.catalog, container.pepper, tenant=tenant, roles=list(roles))
            return clients.enter_context(httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"},
                                                      timeout=30))

        yield client
