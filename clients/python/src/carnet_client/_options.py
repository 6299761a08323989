"""The settings both clients give httpx: base URL, bearer key, timeout, TLS (a CA bundle, mTLS)."""

from __future__ import annotations

import os
import ssl
from typing import Any

import httpx

__version__ = "0.1.0"

Verify = bool | str | os.PathLike[str] | ssl.SSLContext
Cert = str | os.PathLike[str] | tuple[str | os.PathLike[str], str | os.PathLike[str]]


def tls(verify: Verify, cert: Cert | None) -> ssl.SSLContext | bool:
    """httpx's ``verify``: True keeps httpx's default trust store; a path is a CA bundle (a private
    CA); ``cert`` (a PEM with key, or a ``(cert, key)`` pair) adds a client certificate for mTLS."""
    if isinstance(verify, ssl.SSLContext):
        if cert is not None:
            raise ValueError("load the client certificate into the SSLContext you pass as verify")
        return verify
    if cert is None and isinstance(verify, bool):
        return verify
    context = ssl.create_default_context(cafile=None if isinstance(verify, bool) else verify)
    if verify is False:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if cert is not None:
        certfile, keyfile = cert if isinstance(cert, tuple) else (cert, None)
        context.load_cert_chain(certfile, keyfile)
    return context


def http_options(base_url: str, api_key: str, *, timeout: float | httpx.Timeout, verify: Verify,
                 cert: Cert | None) -> dict[str, Any]:
    """The keyword arguments of ``httpx.Client`` / ``httpx.AsyncClient``. The key lives only in the
    Authorization header, which httpx masks in its ``repr``."""
    if not api_key or any(c.isspace() for c in api_key):
        raise ValueError("api_key must be a Carnet API key (crn_...)")
    return {
        "base_url": base_url.rstrip("/"),
        "headers": {"Authorization": f"Bearer {api_key}", "User-Agent": f"carnet-client/{__version__}"},
        "timeout": timeout,
        "verify": tls(verify, cert),
        "follow_redirects": False,
    }
