"""The console's browser-side defences: cookie flags, CSRF tokens, and the headers of every page.

- Cookies: ``__Host-`` names (the browser then insists on ``Secure``, ``Path=/`` and no ``Domain``),
  ``HttpOnly``, ``SameSite=Strict``. ``Secure`` always: Chromium and Firefox accept Secure cookies
  from ``http://localhost`` and ``http://127.0.0.1`` (a potentially trustworthy origin), so the dev
  server on loopback works, and anywhere else the console needs TLS (``CARNET_TLS__*`` or a proxy).
- CSRF: a synchronizer token per session in a hidden field of every form, compared in constant
  time; before login, the login form's token is double-submitted (a cookie and the same value in the
  form). SameSite=Strict is a second line, not the only one.
- Headers: a Content-Security-Policy that allows this origin's stylesheet and images and nothing
  else (no script at all, no inline style, no frame, forms posted only here), no caching of pages
  that show personal data, no referrer, no framing, HSTS for a year.
"""

from __future__ import annotations

import hmac
from typing import TypeVar

from starlette.datastructures import MutableHeaders
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

SESSION_COOKIE = "__Host-carnet-session"
LOGIN_COOKIE = "__Host-carnet-login"
LANG_COOKIE = "__Host-carnet-lang"

CSP = ("default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; "
       "base-uri 'none'; script-src 'none'; connect-src 'none'; font-src 'none'; object-src 'none'")

HEADERS = {
    "Content-Security-Policy": CSP,
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
    # Browsers ignore it over plain http (the loopback dev server) and keep to https for a year once the
    # console was reached over https. Not includeSubDomains: the console cannot speak for the operator's
    # other hosts (a proxy in front may add it).
    "Strict-Transport-Security": "max-age=31536000",
}


R = TypeVar("R", bound=Response)


def harden(response: R) -> R:
    for name, value in HEADERS.items():
        response.headers.setdefault(name, value)
    return response


class Hardened:
    """Every answer under the console's prefix carries ``HEADERS`` (those it does not set itself): the
    pages do already, and so do a 404, a 405 and the stylesheet (issue 46, finding 8)."""

    def __init__(self, app: ASGIApp, *, prefix: str) -> None:
        self.app = app
        self.prefix = prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope.get("path", ""))
        if scope["type"] != "http" or not (path == self.prefix or path.startswith(self.prefix + "/")):
            await self.app(scope, receive, send)
            return

        async def hardened(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in HEADERS.items():
                    headers.setdefault(name, value)
            await send(message)

        await self.app(scope, receive, hardened)


def same_token(expected: str, given: str | None) -> bool:
    return bool(given) and hmac.compare_digest(expected.encode(), (given or "").encode())


def set_cookie(response: Response, name: str, value: str, *, max_age: int | None = None,
               http_only: bool = True) -> None:
    response.set_cookie(name, value, max_age=max_age, path="/", secure=True, httponly=http_only,
                        samesite="strict")


def clear_cookie(response: Response, name: str) -> None:
    response.delete_cookie(name, path="/", secure=True, httponly=True, samesite="strict")
