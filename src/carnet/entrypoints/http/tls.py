"""TLS terminated by uvicorn itself: the settings turned into ``uvicorn.run`` arguments."""

from __future__ import annotations

import ssl
from collections.abc import Callable
from typing import Any

import uvicorn

from carnet.settings.root import TlsSettings, TlsVersion

_MINIMUM = {TlsVersion.TLS1_2: ssl.TLSVersion.TLSv1_2, TlsVersion.TLS1_3: ssl.TLSVersion.TLSv1_3}

ContextFactory = Callable[[uvicorn.Config, Callable[[], ssl.SSLContext]], ssl.SSLContext]


def uvicorn_tls_options(tls: TlsSettings) -> dict[str, Any]:
    """Nothing without a certificate (clear, which production refuses off loopback); otherwise the
    certificate, the client CA (certificates required, or verified when presented) and a context
    factory that raises the minimum protocol version (uvicorn's ``ssl_version`` picks the protocol
    family, not a floor)."""
    if tls.cert_file is None:
        return {}
    reqs = ssl.CERT_NONE
    if tls.client_ca_file is not None:
        reqs = ssl.CERT_REQUIRED if tls.require_client_cert else ssl.CERT_OPTIONAL
    return {
        "ssl_certfile": str(tls.cert_file),
        "ssl_keyfile": str(tls.key_file),
        "ssl_ca_certs": str(tls.client_ca_file) if tls.client_ca_file is not None else None,
        "ssl_cert_reqs": reqs,
        "ssl_context_factory": _with_minimum(_MINIMUM[tls.min_version]),
    }


def _with_minimum(version: ssl.TLSVersion) -> ContextFactory:
    def factory(_config: uvicorn.Config, default: Callable[[], ssl.SSLContext]) -> ssl.SSLContext:
        context = default()
        context.minimum_version = version
        return context

    return factory
