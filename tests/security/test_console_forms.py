"""The console's forms, all of them, without a browser: every POST route under ``/console`` refuses a
request without the session's CSRF token (or with another session's) before anything runs, and
without a session sends back to the login page; the login form refuses a token that was not its own;
``CARNET_CONSOLE__ENABLED=false`` leaves no console route; and the access log names route templates,
never a member id."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from carnet.bootstrap.container import Container
from carnet.bootstrap.wiring import build
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.console import routes_admin, routes_dpo, routes_login, routes_member, routes_procedures
from carnet.ports import Embedder
from carnet.services.apikeys import authenticate, create_key
from carnet.services.memories.remember import NewMemory
from carnet.settings.root import Settings

MEMBER = "ADH-3141"
_CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@pytest.fixture
def client(container: Container) -> Iterator[tuple[TestClient, str]]:
    key = create_key(container.deps.catalog, container.pepper, tenant="assur-nord",
                     roles=["agent", "dpo", "admin"])[0]
    container.facade.remember(authenticate(container.deps.catalog, container.pepper, key), subject_id=MEMBER,
                              items=[NewMemory(text="Le membre habite à Brest.")])
    with TestClient(create_app(container), base_url="https://testserver") as c:  # Secure cookies need https
        yield c, key


def _login(c: TestClient, key: str) -> str:
    token = _CSRF.search(c.get("/console/login").text)
    assert token is not None
    answer = c.post("/console/login", data={"api_key": key, "csrf": token.group(1)}, follow_redirects=False)
    assert answer.status_code == 303, answer.text
    page = _CSRF.search(c.get("/console/member").text)
    assert page is not None
    return page.group(1)


def _posted() -> list[str]:
    """Every form the console's routers take (read from the routers: the app includes them lazily)."""
    routes = [r for m in (routes_login, routes_member, routes_dpo, routes_admin, routes_procedures)
              for r in m.router.routes]
    return sorted(r.path.replace("{procedure_id}", "00000000-0000-4000-8000-000000000000") for r in routes
                  if isinstance(r, APIRoute) and "POST" in r.methods and r.path != "/console/login")


def test_every_console_form_refuses_a_missing_or_foreign_csrf_token(client: tuple[TestClient, str]) -> None:
    c, key = client
    csrf = _login(c, key)
    routes = _posted()
    assert len(routes) >= 10, routes
    body = {"subject_id": MEMBER, "confirm": MEMBER, "query": "adresse", "text": "x", "roles": "agent"}
    for path in routes:
        for token in (None, "forged", csrf[:-1]):
            data = body if token is None else {**body, "csrf": token}
            answer = c.post(path, data=data, follow_redirects=False)
            assert answer.status_code == 403 and "anti-CSRF" in answer.text, (path, token, answer.status_code)
    still = c.post("/console/member", data={"csrf": csrf, "subject_id": MEMBER})
    assert still.status_code == 200 and "Brest" in still.text  # nothing was erased meanwhile


def test_without_a_session_every_form_leads_to_the_login_page(client: tuple[TestClient, str]) -> None:
    c, _ = client
    for path in _posted():
        answer = c.post(path, data={"csrf": "x", "subject_id": MEMBER}, follow_redirects=False)
        assert answer.status_code == 303 and answer.headers["location"] == "/console/login", path


def test_the_login_form_refuses_a_token_it_did_not_issue(client: tuple[TestClient, str]) -> None:
    c, key = client
    c.get("/console/login")
    answer = c.post("/console/login", data={"api_key": key, "csrf": "chosen-by-another-site"},
                    follow_redirects=False)
    assert answer.status_code == 403 and "__Host-carnet-session" not in answer.headers.get("set-cookie", "")


def test_a_wrong_key_is_refused_and_audited_without_the_key(client: tuple[TestClient, str],
                                                             container: Container) -> None:
    c, _ = client
    token = _CSRF.search(c.get("/console/login").text)
    assert token is not None
    wrong = "crn_000000000000_" + "A" * 43
    answer = c.post("/console/login", data={"api_key": wrong, "csrf": token.group(1)})
    assert answer.status_code == 401 and "Clé inconnue" in answer.text
    container.audit.flush()
    entries = [e for e in container.audit.log.entries("_system") if e.event.action == "console.login"]
    assert [e.event.outcome for e in entries] == ["denied"] and wrong not in repr(entries)


def test_the_access_log_names_route_templates_never_the_member(client: tuple[TestClient, str],
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    c, key = client
    csrf = _login(c, key)
    c.post("/console/member", data={"csrf": csrf, "subject_id": MEMBER})
    c.post("/console/dpo/export", data={"csrf": csrf, "subject_id": MEMBER})
    logged = capsys.readouterr().err
    assert "route=/console/member" in logged and MEMBER not in logged


def test_the_console_can_be_turned_off(tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CARNET_CONSOLE__ENABLED", "false")
    c = build(Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys"), embedder=embedder)
    try:
        with TestClient(create_app(c), base_url="https://testserver") as client:
            assert client.get("/console/login").status_code == 404
            assert client.get("/healthz").status_code == 200
    finally:
        c.close()


def test_every_form_redirects_to_a_get_page_that_names_no_member(client: tuple[TestClient, str],
                                                                 container: Container) -> None:
    """Post/redirect/get (issue 50, item 4): a form's answer is a 303 to a GET page whose URL holds an
    opaque token of the session, never the member id or the question; that page shows the member."""
    c, key = client
    csrf = _login(c, key)
    who = authenticate(container.deps.catalog, container.pepper, key)
    memory_id = container.facade.list_memories(who, subject_id=MEMBER, status=None, limit=10).items[0].id
    admin_key = create_key(container.deps.catalog, container.pepper, tenant="assur-nord", roles=["agent"])[0]
    forms = {
        "/console/member": {}, "/console/member/search": {"query": "où habite-t-il"},
        "/console/member/assemble": {"query": "où habite-t-il"}, "/console/dpo": {},
        "/console/dpo/hold": {"reference": "LIT-1"}, "/console/dpo/release": {},
        "/console/dpo/relationship-end": {"ended_on": "30/06/2026"},
        "/console/dpo/rectify": {"memory_id": memory_id, "text": "Le membre habite à Quimper."},
        "/console/procedures": {"text": "Toujours rappeler le délai de rétractation.", "applies_when": "contrat"},
        "/console/admin/keys": {"roles": "agent"}, "/console/admin/intakes/retry": {},
        "/console/admin/keys/revoke": {"key_id": admin_key.split("_")[1]},
        "/console/dpo/erase": {"confirm": MEMBER},  # last: the member is gone after it
    }
    # Answered otherwise, and covered elsewhere: logout (to the login page), the export (a download);
    # restore and the procedure decisions answer through the same `after` (tests/e2e).
    others = {"/console/logout", "/console/dpo/export", "/console/member/restore", "/console/dpo/restore"}
    decisions = {p for p in _posted() if p.startswith("/console/procedures/0")}
    assert set(forms) | others | decisions == set(_posted())
    for path, fields in forms.items():
        answer = c.post(path, data={"csrf": csrf, "subject_id": MEMBER, **fields}, follow_redirects=False)
        assert answer.status_code == 303, (path, answer.status_code, answer.text[:300])
        where = answer.headers["location"]
        assert re.fullmatch(r"/console/(member|dpo|dpo/receipt|admin|procedures)\?view=[\w-]{20,}", where), where
        page = c.get(where)
        assert page.status_code == 200 and MEMBER not in where and "habite" not in where
        if path.startswith(("/console/member", "/console/dpo")) and path != "/console/dpo/erase":
            assert MEMBER in page.text, path  # the screen names the member in the page, not in the URL
    assert "Effacement complet et vérifié" in page.text and MEMBER not in page.text
    gone = c.post("/console/dpo/hold", data={"csrf": csrf, "subject_id": MEMBER}, follow_redirects=False)
    assert gone.status_code == 303 and re.fullmatch(r"/console/error\?view=[\w-]{20,}", gone.headers["location"])
    refusal = c.get(gone.headers["location"])  # a refusal is a GET page with the refusal's status
    assert refusal.status_code == 404 and "Aucun membre avec cet identifiant" in refusal.text
