"""Key creation cannot widen what its creator may do (issue 46, finding 6), over real HTTP.

An ``admin`` key mints ``agent`` and ``admin`` keys; ``dpo`` (export, erase) and ``supervisor``
(approve a team procedure) only from a key that holds that role itself, or from ``carnet apikey
create`` on the host. The REST route and the console's form refuse the same way (403, audited), and
the console offers only the roles the viewer may grant."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest

from carnet.bootstrap.container import Container
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.server import running
from carnet.services.apikeys import create_key
from tests.support.plain_browser import PlainBrowser

TENANT = "assur-nord"


@pytest.fixture
def served(container: Container) -> Iterator[tuple[str, Container]]:
    with running(create_app(container)) as base:
        yield base, container


def _client(base: str, container: Container, *roles: str) -> httpx.Client:
    key, _ = create_key(container.deps.catalog, container.pepper, tenant=TENANT, roles=list(roles))
    return httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=30)


def _mint(api: httpx.Client, *roles: str) -> httpx.Response:
    return api.post("/api/v1/admin/apikeys", json={"roles": list(roles)})


def test_an_admin_key_mints_only_what_it_may_grant(served: tuple[str, Container]) -> None:
    base, container = served
    with _client(base, container, "admin") as admin, _client(base, container, "admin", "dpo") as admin_dpo:
        for roles in (("dpo",), ("supervisor",), ("agent", "dpo"), ("admin", "supervisor")):
            refused = _mint(admin, *roles)
            assert refused.status_code == 403, (roles, refused.text)
            assert refused.json()["error"]["code"] == "forbidden"
        assert _mint(admin, "agent").status_code == 201
        assert _mint(admin, "admin").status_code == 201
        assert _mint(admin_dpo, "dpo").status_code == 201  # a holder of the role may hand it on
        assert _mint(admin_dpo, "supervisor").status_code == 403
        made = sorted(tuple(k["roles"]) for k in admin.get("/api/v1/admin/apikeys").json()["items"])
    assert made.count(("dpo",)) == 1 and ("supervisor",) not in made
    container.audit.flush()
    denied = [e.event for e in container.audit.log.entries(TENANT)
              if e.event.action == "apikey.create" and e.event.outcome == "refused"]
    assert len(denied) == 5  # every refusal is in the audit trail


def test_the_console_offers_and_grants_only_what_the_admin_may(served: tuple[str, Container]) -> None:
    base, container = served
    key, _ = create_key(container.deps.catalog, container.pepper, tenant=TENANT, roles=["admin"])
    with PlainBrowser(base) as browser:
        assert browser.login(key).status_code == 303
        csrf, page = browser.csrf("/console/admin")
        offered = set(re.findall(r'name="roles" type="checkbox" value="([a-z]+)"', page))
        assert offered == {"agent", "admin"}
        refused = browser.request("POST", "/console/admin/keys", data={"csrf": csrf, "roles": ["supervisor"]})
        assert refused.status_code == 303 and refused.headers["location"].startswith("/console/error?view=")
        assert browser.request("GET", refused.headers["location"]).status_code == 403
        made = browser.request("POST", "/console/admin/keys", data={"csrf": csrf, "roles": ["agent"]})
        assert made.status_code == 303 and made.headers["location"].startswith("/console/admin?view=")
        shown = browser.request("GET", made.headers["location"])  # post/redirect/get: the key, once
        assert shown.status_code == 200 and "crn_" in shown.text
        assert "crn_" not in browser.request("GET", made.headers["location"]).text
        listed = container.deps.catalog.api_keys(TENANT)
        assert sorted(tuple(k.roles) for k in listed) == [("admin",), ("agent",)]
