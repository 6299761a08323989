"""The web console at ``/console`` (docs/console.md): server-rendered pages over the facade, for agents
(a member's timeline, search and assemble preview), DPOs (export, rectification, erasure, legal hold,
audit trail) and administrators (API keys, retention classes). No script, no CDN: the pages, their
stylesheet and their words are in this package."""

from __future__ import annotations

from datetime import timedelta
from importlib.resources import files
from zoneinfo import ZoneInfo

import jinja2
from fastapi import FastAPI
from starlette.responses import Response

from carnet.bootstrap.container import Container
from carnet.entrypoints.http.console import routes_admin, routes_dpo, routes_login, routes_member, routes_procedures
from carnet.entrypoints.http.console.security import Hardened
from carnet.entrypoints.http.console.sessions import SessionStore
from carnet.entrypoints.http.console.web import PREFIX, Console
from carnet.services.ratelimit import RateLimiter


def install(app: FastAPI, container: Container) -> None:
    """Mount the console on ``app`` (unless ``CARNET_CONSOLE__ENABLED=false``)."""
    settings = container.settings
    if not settings.console.enabled:
        return
    s = settings.console
    app.state.console = Console(
        container=container,
        sessions=SessionStore(idle=timedelta(minutes=s.idle_minutes), absolute=timedelta(minutes=s.absolute_minutes),
                              max_sessions=s.max_sessions, max_per_tenant=s.max_sessions_per_tenant,
                              now=container.deps.clock.now),
        pages=jinja2.Environment(loader=jinja2.PackageLoader("carnet.entrypoints.http.console", "templates"),
                                 autoescape=True, undefined=jinja2.StrictUndefined, auto_reload=False),
        login_budget=RateLimiter(settings.api.unauthenticated_rate_limit or None), zone=ZoneInfo(s.time_zone))
    for module in (routes_login, routes_member, routes_dpo, routes_admin, routes_procedures):
        app.include_router(module.router)
    app.add_middleware(Hardened, prefix=PREFIX)  # the security headers on every answer, 404s and the stylesheet too
    css = files("carnet.entrypoints.http.console").joinpath("static/console.css").read_bytes()

    @app.get(f"{PREFIX}/static/console.css", include_in_schema=False)
    def stylesheet() -> Response:
        return Response(css, media_type="text/css", headers={"Cache-Control": "public, max-age=3600",
                                                              "X-Content-Type-Options": "nosniff"})
