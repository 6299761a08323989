"""``carnet`` commands that ask a running server instead of opening its store: the server's address
(``--url``, ``CARNET_URL``, else ``CARNET_HOST``/``CARNET_PORT``) and an API key from ``CARNET_API_KEY``,
never from the command line (``ps`` shows every user the arguments). Errors say what to fix and
never repeat the key."""

from __future__ import annotations

import os
from typing import Any, NoReturn

import httpx
import typer

from carnet.settings.root import Settings

KEY_ENV, URL_ENV = "CARNET_API_KEY", "CARNET_URL"
_WHY = {401: f"the server does not accept the key in {KEY_ENV}",
        403: f"the key in {KEY_ENV} lacks the role this needs (admin)"}


def server_url(settings: Settings, url: str | None) -> str | None:
    """``--url``, else ``CARNET_URL``, else the address these settings serve on when a key is given."""
    chosen = url or os.environ.get(URL_ENV)
    if chosen:
        return chosen.rstrip("/")
    if not os.environ.get(KEY_ENV):
        return None
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::") else settings.host
    host = f"[{host}]" if ":" in host else host
    return f"{'https' if settings.tls.enabled else 'http'}://{host}:{settings.port}"


def post(base: str, path: str, *, timeout: float = 600.0) -> dict[str, Any]:
    """``POST base+path`` with the key of ``CARNET_API_KEY``; exit 2 with a readable reason otherwise.
    https is verified (a private CA: ``SSL_CERT_FILE``)."""
    key = os.environ.get(KEY_ENV)
    if not key:
        _fail(f"set {KEY_ENV} to an admin key of the server at {base} (never on the command line)")
    try:
        r = httpx.post(base + path, headers={"Authorization": f"Bearer {key}"}, timeout=timeout)
    except httpx.HTTPError as exc:
        _fail(f"cannot reach the server at {base} ({type(exc).__name__}); check --url or {URL_ENV}")
    if r.status_code in _WHY:
        _fail(_WHY[r.status_code])
    try:
        body = r.json()
    except ValueError:
        body = None
    if r.status_code >= 400 or not isinstance(body, dict):
        error = body.get("error") if isinstance(body, dict) else None
        detail = f"{error.get('code')}: {error.get('message')}" if isinstance(error, dict) else f"HTTP {r.status_code}"
        _fail(f"the server at {base} refused: {detail}")
    return body


def _fail(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)
