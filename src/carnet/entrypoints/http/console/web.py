"""What every console page shares: the session and principal of a request, the CSRF check of a form,
HTML rendering, and the translation of errors into pages (``ConsoleRoute``).

The principal of a page is the one the REST API would give the session's key: looked up again on every
request by the key's keyed hash (a revoked key ends its sessions at their next page), and the key's
request budget is spent as under ``/api/v1``. Every action then goes through the facade, which checks
the role, applies the tenant's special-category policy and writes the audit entry."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Annotated, Any
from zoneinfo import ZoneInfo

import jinja2
import structlog
from fastapi import Depends, Form, Request
from fastapi.routing import APIRoute
from starlette.responses import HTMLResponse, RedirectResponse, Response

from carnet.bootstrap.container import Container
from carnet.entrypoints.http.console import i18n, views
from carnet.entrypoints.http.console.dates import Dates
from carnet.entrypoints.http.console.screens import Screen
from carnet.entrypoints.http.console.security import LANG_COOKIE, SESSION_COOKIE, harden, same_token
from carnet.entrypoints.http.console.sessions import Session, SessionStore
from carnet.errors import CarnetError, Unauthenticated
from carnet.services.apikeys import Principal
from carnet.services.facade import Facade
from carnet.services.ratelimit import RateLimiter

log = structlog.get_logger(__name__)

PREFIX = "/console"


@dataclass(frozen=True, slots=True)
class Console:
    """The console's state for one app: ``app.state.console``."""

    container: Container
    sessions: SessionStore
    pages: jinja2.Environment
    login_budget: RateLimiter  # login attempts per client address
    zone: ZoneInfo  # the zone dates are shown in (CARNET_CONSOLE__TIME_ZONE)


@dataclass(frozen=True, slots=True)
class Viewer:
    """A request's session, its token and the principal its key gives now."""

    session: Session
    token: str
    who: Principal


class LoginNeeded(Exception):
    """No live session: the page answers with a redirect to the login form."""


class CsrfRefused(Exception):
    """A form posted without its session's CSRF token."""


def console_of(request: Request) -> Console:
    c: Console = request.app.state.console
    return c


def facade_of(request: Request) -> Facade:
    """The one door every console action goes through."""
    return console_of(request).container.facade


def lang_of(request: Request) -> str:
    lang = request.cookies.get(LANG_COOKIE)
    return lang if lang in i18n.LANGS else i18n.DEFAULT


def viewer(request: Request) -> Viewer:
    """The live session and its principal, or ``LoginNeeded``."""
    console = console_of(request)
    token = request.cookies.get(SESSION_COOKIE)
    session = console.sessions.get(token)
    if session is None or token is None:
        raise LoginNeeded()
    c = console.container
    try:
        who = c.facade.authenticate_session(session.key_hash)
    except Unauthenticated:
        console.sessions.close(token)  # the key was revoked: its sessions end with it
        raise LoginNeeded() from None
    c.limiter.hit(who.key_id, who.rate_limit)
    request.state.key_id, request.state.tenant = who.key_id, who.tenant  # the access log's key id
    return Viewer(session, token, who)


def poster(request: Request, csrf: Annotated[str, Form()] = "") -> Viewer:
    """``viewer`` for a posted form, which must carry the session's CSRF token."""
    v = viewer(request)
    if not same_token(v.session.csrf, csrf):
        raise CsrfRefused()
    return v


Seen = Annotated[Viewer, Depends(viewer)]
Posted = Annotated[Viewer, Depends(poster)]
FormText = Annotated[str, Form()]


def render(request: Request, template: str, *, status: int = 200, v: Viewer | None = None,
           **context: Any) -> HTMLResponse:
    console = console_of(request)
    lang = lang_of(request)
    t = i18n.translator(lang)
    page = console.pages.get_template(template).render(
        t=t, label=i18n.labeller(t), n=i18n.counter(t, lang), dates=Dates(zone=console.zone, t=t),
        level=views.level, lang=lang, v=v, roles=set(v.who.roles) if v else set(), prefix=PREFIX, **context)
    return harden(HTMLResponse(page, status_code=status))


def after(v: Viewer, screen: Screen) -> Response:
    """Post/redirect/get: keep what the next page shows in the session, and send the browser to that page
    by a URL holding only the screen's token (``screens.py``)."""
    token = v.session.screens.keep(screen)
    return harden(RedirectResponse(f"{PREFIX}/{screen.page}?view={token}",
                                   status_code=303))


def error_page(request: Request, *, status: int, code: str, v: Viewer | None) -> HTMLResponse:
    return render(request, "error.html", status=status, v=v, code=code)


class ConsoleRoute(APIRoute):
    """Turns what a console route raises into a page: the login form for ``LoginNeeded``, 403 for a
    refused CSRF token (at once: nothing of the form is trusted), and a ``CarnetError`` into its HTTP
    status with a translated message (never the error's own text, which is English and may name a
    field). A posted form refused that way is redirected (303) to ``GET /console/error?view=…``, which
    answers the page with that status: Back never lands on a POST. The session, when there is one, is
    re-read for the page's navigation."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handle = super().get_route_handler()

        async def guarded(request: Request) -> Response:
            try:
                return await handle(request)
            except LoginNeeded:
                return harden(RedirectResponse(f"{PREFIX}/login", status_code=303))
            except CsrfRefused:
                log.warning("console_csrf_refused", route=self.path)
                return error_page(request, status=403, code="csrf", v=None)
            except CarnetError as exc:
                v = _quiet_viewer(request)
                if request.method == "POST" and v is not None and "retry_after" not in exc.context:
                    # post/redirect/get for a refusal too: Back to it asks for a GET page, never a re-post
                    return after(v, Screen("error", done=exc.code, count=exc.status))
                page = error_page(request, status=exc.status, code=exc.code, v=v)
                if "retry_after" in exc.context:  # over a budget (429): say when to come back
                    page.headers["Retry-After"] = str(exc.context["retry_after"])
                return page

        return guarded


def _quiet_viewer(request: Request) -> Viewer | None:
    """The session for an error page's navigation, if still live (no budget spent, nothing raised)."""
    console = console_of(request)
    token = request.cookies.get(SESSION_COOKIE)
    session = console.sessions.get(token)
    if session is None or token is None:
        return None
    try:
        return Viewer(session, token, console.container.facade.authenticate_session(session.key_hash))
    except CarnetError:
        return None
