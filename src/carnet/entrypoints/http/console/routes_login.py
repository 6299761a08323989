"""Login (an API key exchanged for a session), logout, and the language of the pages.

Every login attempt spends one request of its client address's budget
(``CARNET_API__UNAUTHENTICATED_RATE_LIMIT``, as the REST gate's failed keys do), then 429. A login is
audited in the key's tenant (``console.login``), a refused one in the ``_system`` chain (the tenant of
a wrong key is unknown), a logout as ``console.logout``."""

from __future__ import annotations

import secrets

from fastapi import APIRouter, Request
from starlette.responses import RedirectResponse, Response

from carnet.entrypoints.http.client_address import ClientAddress
from carnet.entrypoints.http.console import i18n
from carnet.entrypoints.http.console.security import (
    LANG_COOKIE,
    LOGIN_COOKIE,
    SESSION_COOKIE,
    clear_cookie,
    harden,
    same_token,
    set_cookie,
)
from carnet.entrypoints.http.console.web import (
    PREFIX,
    ConsoleRoute,
    FormText,
    LoginNeeded,
    Posted,
    console_of,
    error_page,
    render,
    viewer,
)
from carnet.errors import Unauthenticated
from carnet.services.apikeys import Principal, hash_key
from carnet.services.audit import SYSTEM_CHAIN

router = APIRouter(prefix=PREFIX, route_class=ConsoleRoute, include_in_schema=False)


def home_of(who: Principal) -> str:
    """The first section the key's roles open: the member view, the DPO's, administration, or the
    team procedures (a supervisor)."""
    for role, page in (("agent", "member"), ("dpo", "dpo"), ("admin", "admin"), ("supervisor", "procedures")):
        if role in who.roles:
            return f"{PREFIX}/{page}"
    return f"{PREFIX}/member"


def _redirect(path: str) -> Response:
    return harden(RedirectResponse(path, status_code=303))


@router.get("")
@router.get("/")
def start(request: Request) -> Response:
    try:
        return _redirect(home_of(viewer(request).who))
    except LoginNeeded:
        return _redirect(f"{PREFIX}/login")


@router.get("/login")
def login_page(request: Request) -> Response:
    return login_form(request)


def login_form(request: Request, *, status: int = 200, error: str | None = None) -> Response:
    token = secrets.token_urlsafe(32)
    response = render(request, "login.html", status=status, login_csrf=token, error=error)
    set_cookie(response, LOGIN_COOKIE, token, max_age=3600)
    return response


@router.post("/login")
def login(request: Request, api_key: FormText = "", csrf: FormText = "") -> Response:
    console = console_of(request)
    c = console.container
    if not same_token(request.cookies.get(LOGIN_COOKIE, ""), csrf):
        return login_form(request, status=403, error="csrf")
    source = ClientAddress(c.settings.api.trusted_proxies).source(request.scope)
    console.login_budget.hit(f"console-login:{source}")
    try:
        who = c.facade.authenticate(api_key.strip())
    except Unauthenticated:
        c.audit.read(c.audit.event(tenant=SYSTEM_CHAIN, actor="anonymous", action="console.login",
                                   outcome="denied", detail={"code": "unauthenticated"}))
        return login_form(request, status=401, error="unauthenticated")
    c.audit.record(c.audit.event(tenant=who.tenant, actor=who.key_id, action="console.login"))
    console.sessions.close(request.cookies.get(SESSION_COOKIE))  # a session open in this browser ends here
    token, _ = console.sessions.open(key_hash=hash_key(c.pepper, api_key.strip()), key_id=who.key_id,
                                     tenant=who.tenant)
    response = _redirect(home_of(who))
    set_cookie(response, SESSION_COOKIE, token)
    clear_cookie(response, LOGIN_COOKIE)
    return response


@router.post("/logout")
def logout(request: Request, v: Posted) -> Response:
    console = console_of(request)
    console.sessions.close(v.token)
    c = console.container
    c.audit.record(c.audit.event(tenant=v.who.tenant, actor=v.who.key_id, action="console.logout"))
    response = _redirect(f"{PREFIX}/login")
    clear_cookie(response, SESSION_COOKIE)
    return response


@router.get("/error")
def refused(request: Request, view: str = "") -> Response:
    """The page of a posted form's refusal (``web.ConsoleRoute``), with the refusal's own status."""
    try:
        v = viewer(request)
    except LoginNeeded:
        return _redirect(f"{PREFIX}/login")
    screen = v.session.screens.show(view, page="error")
    if screen is None or screen.done is None:
        return _redirect(f"{PREFIX}/")
    return error_page(request, status=screen.count, code=screen.done, v=v)


@router.get("/lang/{code}")
def choose_language(code: str) -> Response:
    """A display preference only (a link, not a form: it changes nothing of anyone's data)."""
    response = _redirect(f"{PREFIX}/")
    if code in i18n.LANGS:
        set_cookie(response, LANG_COOKIE, code, max_age=365 * 24 * 3600)
    return response
