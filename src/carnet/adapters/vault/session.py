"""One authenticated ``hvac`` session, shared by everything Carnet asks of Vault/OpenBao.

The Transit KMS (:mod:`carnet.adapters.kms.vault_transit`) and the KV v2 key store
(:mod:`carnet.adapters.keystores.vault_kv`) make their calls through ``VaultSession.call``, which:

- logs in again (AppRole or Kubernetes) before 3/4 of the token's TTL, and once more whenever a
  call is denied (an expired or revoked token is reported as 403), concurrent callers logging in once;
- translates every hvac/requests failure into a Carnet error: unreachable, sealed, overloaded or
  failing → ``KmsUnavailable`` (503); credentials or policy refused → ``KmsDenied``; any other
  refusal → the caller's ``rejected`` type. Messages carry Vault's reason, never key material.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import hvac
import hvac.exceptions as hvac_errors
import structlog

from carnet.adapters.vault.auth import Auth, TokenAuth, login_with
from carnet.errors import CarnetError, KmsDenied, KmsRejected, KmsUnavailable

log = structlog.get_logger(__name__)

_RENEW_FRACTION = 0.75
_T = TypeVar("_T")


class VaultSession:
    """``client`` plus the way to (re)authenticate it. Thread-safe as far as ``hvac.Client`` is."""

    def __init__(self, client: hvac.Client, login: Callable[[hvac.Client], float] | None = None) -> None:
        """``login`` (re)authenticates ``client`` and returns the token's TTL in seconds (0: no
        expiry); without it the client's token is used as is and never renewed."""
        self.client = client
        self._login = login
        self._login_lock = threading.Lock()
        self._renew_at = 0.0 if login is not None else float("inf")
        self._generation = 0  # how many logins so far: concurrent callers log in once, not each

    def call(self, op: str, tenant: str | None, request: Callable[[], _T], *,
             rejected: type[CarnetError] = KmsRejected) -> _T:
        """Run one hvac request with errors translated; log in again first when the token is
        due for renewal, and retry once after logging in again when Vault says 401/403."""
        if time.monotonic() >= self._renew_at:
            self._relogin(seen=self._generation)
        seen = self._generation
        try:
            with translated(op, tenant, rejected):
                return request()
        except KmsDenied:
            if self._login is None:
                raise
            log.warning("kms_denied_relogin", op=op, tenant=tenant)
            self._relogin(seen=seen)
            with translated(op, tenant, rejected):
                return request()

    def login(self) -> None:
        """Log in now (a no-op with a given token)."""
        self._relogin(seen=self._generation)

    def _relogin(self, *, seen: int) -> None:
        """Log in unless another thread already did since generation ``seen`` of the token."""
        login = self._login
        if login is None:
            return
        with self._login_lock:
            if self._generation != seen:
                return
            with translated("login", None, KmsDenied):
                ttl = login(self.client)
            self._renew_at = time.monotonic() + ttl * _RENEW_FRACTION if ttl > 0 else float("inf")
            self._generation += 1
        log.info("kms_logged_in", ttl_s=ttl)


def open_session(url: str, *, auth: Auth, ca_cert: Path | None = None, client_cert: tuple[Path, Path] | None = None,
                 timeout: float = 5.0, namespace: str | None = None) -> VaultSession:
    """A session on ``url``, logged in. TLS is always verified: against ``ca_cert`` when given,
    else the system trust store; ``client_cert`` is ``(cert, key)`` for mutual TLS."""
    if url.startswith("http://"):
        log.warning("kms_plaintext_http", url=url, note="Vault over plain HTTP: use https outside a test")
    client = hvac.Client(
        url=url,
        verify=str(ca_cert) if ca_cert is not None else True,
        cert=(str(client_cert[0]), str(client_cert[1])) if client_cert is not None else None,
        timeout=timeout,
        namespace=namespace,
    )
    if isinstance(auth, TokenAuth):
        client.token = auth.token
        session = VaultSession(client)
    else:
        session = VaultSession(client, login_with(auth))
    session.login()
    return session


@contextmanager
def translated(op: str, tenant: str | None, rejected: type[CarnetError]) -> Iterator[None]:
    """hvac and requests errors → Carnet errors."""
    context: dict[str, object] = {"op": op, "tenant": tenant}
    try:
        yield
    except (hvac_errors.Unauthorized, hvac_errors.Forbidden) as exc:
        raise KmsDenied(f"KMS denied {op}: {exc}", **context) from exc
    except (
        hvac_errors.VaultDown,
        hvac_errors.InternalServerError,
        hvac_errors.BadGateway,
        hvac_errors.RateLimitExceeded,
        hvac_errors.VaultNotInitialized,
    ) as exc:
        raise KmsUnavailable(f"KMS unavailable for {op}: {exc}", **context) from exc
    except hvac_errors.VaultError as exc:
        verb = "denied" if issubclass(rejected, KmsDenied) else "rejected"
        raise rejected(f"KMS {verb} {op}: {exc}", **context) from exc
    except OSError as exc:  # requests' ConnectionError, Timeout, SSLError; an unreadable JWT file
        raise KmsUnavailable(f"KMS unreachable for {op}: {type(exc).__name__}: {exc}"[:400], **context) from exc
