"""The process's logged-in PKCS#11 session per token, and the translation of PKCS#11 errors.

PKCS#11 login state belongs to the process, not to a session: one logged-in read/write session per
(library, token) is shared under a lock. A session that dies is dropped and reopened, the call retried
once. A refused PIN is never tried again (HSMs lock users); it is remembered as a keyed digest only.
Used by :mod:`carnet.adapters.kms.hsm`.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import pkcs11
import pkcs11.exceptions as p11
import structlog
from pkcs11.types import Session, Token

from carnet.errors import KmsDenied, KmsRejected, KmsUnavailable

log = structlog.get_logger(__name__)

_T = TypeVar("_T")

# The session is gone (or its login is): drop it, open a new one, try once more.
_SESSION_LOST: tuple[type[Exception], ...] = (
    p11.SessionClosed,
    p11.SessionHandleInvalid,
    p11.DeviceRemoved,
    p11.TokenNotPresent,
    p11.UserNotLoggedIn,
)
# The token cannot serve us now.
_UNAVAILABLE: tuple[type[Exception], ...] = (
    *_SESSION_LOST,
    p11.DeviceError,
    p11.DeviceMemory,
    p11.HostMemory,
    p11.SessionCount,
    p11.NoSuchToken,
    p11.TokenNotRecognised,
    p11.FunctionCancelled,
)
# The token refuses our credentials.
_DENIED: tuple[type[Exception], ...] = (
    p11.PinIncorrect,
    p11.PinLocked,
    p11.PinExpired,
    p11.PinInvalid,
    p11.PinLenRange,
    p11.UserPinNotInitialized,
)


class Pin:
    """The user PIN, with a keyed digest to compare PINs without keeping a second copy around."""

    __slots__ = ("digest", "value")

    def __init__(self, value: str) -> None:
        self.value = value
        self.digest = hmac.new(_PROCESS_SALT, value.encode(), hashlib.sha256).digest()

    def __repr__(self) -> str:
        return "Pin(***)"


_PROCESS_SALT = secrets.token_bytes(32)


class Connection:
    """The process's logged-in session on one token of one library, shared under a lock."""

    def __init__(self, library: str, token_label: str) -> None:
        self._library = library
        self._token_label = token_label
        self._lock = threading.RLock()
        self._session: Session | None = None
        self._logged_in_with: bytes | None = None  # digest of the PIN the token accepted
        self._refused: set[bytes] = set()  # digests of PINs the token refused: never tried again

    def __repr__(self) -> str:
        return f"Connection(library={self._library!r}, token_label={self._token_label!r})"

    def run(self, op: str, tenant: str | None, pin: Pin, action: Callable[[Session], _T]) -> _T:
        with self._lock:
            for attempt in (1, 2):
                reused = self._session is not None
                session = self._open(op, tenant, pin)
                try:
                    with translated(op, tenant):
                        if reused:
                            # Liveness first: python-pkcs11 0.10 reports an object search that
                            # fails on a dead session once more, as an unraisable error in a
                            # destructor. C_GenerateRandom fails cleanly.
                            token_random(session, 1)
                        return action(session)
                except KmsUnavailable as exc:
                    if attempt == 2 or not isinstance(exc.__cause__, _SESSION_LOST):
                        raise
                    log.warning("hsm_session_lost", op=op, tenant=tenant, error=type(exc.__cause__).__name__)
                    self._drop()
            raise AssertionError("unreachable")

    def close(self) -> None:
        with self._lock:
            session, self._session = self._session, None
            self._logged_in_with = None
            if session is not None:
                with translated("close", None):
                    session.close()

    def _open(self, op: str, tenant: str | None, pin: Pin) -> Session:
        """The live session, or a new one logged in with ``pin``. Caller holds the lock."""
        if pin.digest in self._refused:
            raise KmsDenied("HSM refused this PIN earlier: not trying again (fix the PIN setting)", op=op)
        if self._logged_in_with is not None and not hmac.compare_digest(pin.digest, self._logged_in_with):
            raise KmsDenied("PIN differs from the one this process is logged in to the token with", op=op)
        if self._session is not None:
            return self._session
        token = self._token(op)
        # A refused login leaks the session python-pkcs11 opened for it (it does not close it):
        # one per refused PIN, since a refused PIN is never tried again.
        try:
            with translated("login", tenant):
                try:
                    session = token.open(rw=True, user_pin=pin.value)
                except p11.UserAlreadyLoggedIn:
                    # The login survived the session we lost (other sessions of this process are
                    # open): the token already accepted this PIN (checked above), share it.
                    if self._logged_in_with is None:
                        raise KmsDenied(
                            "another part of this process is already logged in to the token", op=op
                        ) from None
                    session = token.open(rw=True)
        except KmsDenied as exc:
            if isinstance(exc.__cause__, p11.PinIncorrect | p11.PinLocked | p11.PinInvalid | p11.PinLenRange):
                self._refused.add(pin.digest)
            raise
        self._session, self._logged_in_with = session, pin.digest
        log.info("hsm_logged_in", library=self._library, token=self._token_label)
        return session

    def _token(self, op: str) -> Token:
        with translated(op, None):
            return _token(self._library, self._token_label)

    def _drop(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            with contextlib.suppress(p11.PKCS11Error):  # it is already gone: that is why we drop it
                session.close()


_registry_lock = threading.Lock()
_connections: dict[tuple[str, str], Connection] = {}


def _token(library: str, token_label: str) -> Token:
    """The token, from the library loaded (and ``C_Initialize``d) once per process: python-pkcs11
    keeps one ``lib`` per path; its cache is not locked, so we load under ours."""
    if not os.path.isfile(library):
        raise KmsUnavailable("PKCS#11 library not found", library=library)
    with _registry_lock:
        lib = pkcs11.lib(library)
    return lib.get_token(token_label=token_label)


def connection(library: str, token_label: str) -> Connection:
    key = (os.path.realpath(library), token_label)
    with _registry_lock:
        connection = _connections.get(key)
        if connection is None:
            connection = _connections[key] = Connection(key[0], token_label)
        return connection


@contextmanager
def translated(op: str, tenant: str | None) -> Iterator[None]:
    """python-pkcs11 errors → Carnet errors. Their messages are empty or describe the call; we
    add only the error's class name (never a PIN, never key material)."""
    context: dict[str, object] = {"op": op, "tenant": tenant}
    try:
        yield
    except _DENIED as exc:
        raise KmsDenied(f"HSM refused the PIN ({type(exc).__name__}) for {op}", **context) from exc
    except _UNAVAILABLE as exc:
        raise KmsUnavailable(f"HSM unavailable for {op}: {type(exc).__name__}", **context) from exc
    except p11.NoSuchKey as exc:
        raise KmsRejected(f"HSM has no such key for {op}", **context) from exc
    except p11.PKCS11Error as exc:
        name = type(exc).__name__
        if name == "PKCS11Error":  # the library failed to load, or an untyped return value
            raise KmsUnavailable(f"HSM unavailable for {op}: {str(exc)[:300]}", **context) from exc
        raise KmsRejected(f"HSM rejected {op}: {name}", **context) from exc


def token_random(session: Session, n_bytes: int) -> bytes:
    value = session.generate_random(n_bytes * 8)
    if len(value) != n_bytes:
        raise KmsRejected("HSM RNG returned the wrong number of bytes")
    return value
