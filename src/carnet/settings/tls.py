"""TLS: the certificate ``carnet serve`` terminates TLS with (``CARNET_TLS__*``), and the client
certificate pairs of outbound links (Vault, the LLM server, Qdrant)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Self

from pydantic import BaseModel, model_validator


def cert_pair(cert: Path | None, key: Path | None, prefix: str) -> None:
    """A client certificate and its key go together (mutual TLS to an outbound link)."""
    if (cert is None) != (key is None):
        raise ValueError(f"{prefix}CLIENT_CERT and {prefix}CLIENT_KEY go together")


class TlsVersion(StrEnum):
    TLS1_2 = "TLSv1.2"
    TLS1_3 = "TLSv1.3"


class TlsSettings(BaseModel):
    """TLS terminated by ``carnet serve`` itself (and ``carnet mcp --transport http``).

    The key is a file path, never the key in a variable (environments leak: ``/proc``, crash dumps,
    ``docker inspect``); keep it unencrypted, readable only by the service's user. Client
    certificates are transport only: with them required, every request still needs its API key."""

    cert_file: Path | None = None  # server certificate chain (PEM), leaf first
    key_file: Path | None = None  # its private key (PEM)
    client_ca_file: Path | None = None  # CA bundle client certificates are verified against
    require_client_cert: bool = False  # mutual TLS: refuse the handshake without a certificate from that CA
    min_version: TlsVersion = TlsVersion.TLS1_2
    # A statement that a reverse proxy or ingress in front terminates TLS, so this process may listen
    # in clear on a non-loopback interface in production (refused otherwise).
    terminated_upstream: bool = False

    @property
    def enabled(self) -> bool:
        return self.cert_file is not None

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("CARNET_TLS__CERT_FILE and CARNET_TLS__KEY_FILE go together")
        if self.require_client_cert and self.client_ca_file is None:
            raise ValueError("CARNET_TLS__REQUIRE_CLIENT_CERT needs CARNET_TLS__CLIENT_CA_FILE")
        if self.client_ca_file is not None and self.cert_file is None:
            raise ValueError("CARNET_TLS__CLIENT_CA_FILE needs CARNET_TLS__CERT_FILE (client certificates need TLS)")
        for name in ("cert_file", "key_file", "client_ca_file"):
            path = getattr(self, name)
            if path is not None and not path.is_file():
                raise ValueError(f"CARNET_TLS__{name.upper()}: no readable file at {path}")
        return self
