"""Console sessions, held server-side in this process's memory.

The browser holds a random token (256 bits) in an HttpOnly cookie; this store keys sessions by the
token's SHA-256, so nothing here can be replayed as a cookie. A session holds the keyed hash of the
API key that opened it (``carnet.services.apikeys.hash_key``), never the key, and its CSRF token.
It ends after ``idle`` without use, after ``absolute`` however used, at logout, or when the process
restarts (everyone logs in again). Each tenant holds at most ``max_per_tenant`` sessions (a login
beyond ends that tenant's oldest), and when the process's ``max_sessions`` are all taken a login ends
the oldest session of the tenant holding the most: one tenant's logins never evict another tenant's
sessions while that tenant holds fewer (issue 46, finding 8). Several processes behind one address
need sticky sessions, or a shared store behind this same interface (docs/console.md).
"""

from __future__ import annotations

import hashlib
import secrets
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from carnet.entrypoints.http.console.screens import Screens


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(slots=True)
class Session:
    key_hash: str
    key_id: str
    tenant: str
    started: datetime
    seen: datetime
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    screens: Screens = field(default_factory=Screens)  # what its pages show after a form (screens.py)


class SessionStore:
    def __init__(self, *, idle: timedelta, absolute: timedelta, max_sessions: int,
                 now: Callable[[], datetime], max_per_tenant: int | None = None) -> None:
        self.idle, self.absolute, self._max = idle, absolute, max_sessions
        self._per_tenant = max_per_tenant or max_sessions
        self._now = now
        self._sessions: OrderedDict[str, Session] = OrderedDict()  # oldest login first
        self._lock = threading.Lock()

    def open(self, *, key_hash: str, key_id: str, tenant: str) -> tuple[str, Session]:
        """A new session and its token (a fresh one at every login: a token set before it is never kept)."""
        token = secrets.token_urlsafe(32)
        at = self._now()
        session = Session(key_hash=key_hash, key_id=key_id, tenant=tenant, started=at, seen=at)
        with self._lock:
            for digest in [d for d, s in self._sessions.items() if self._over(s, at)]:
                del self._sessions[digest]  # swept at each login: an abandoned session holds nothing for long
            self._sessions[_digest(token)] = session
            while self._count(tenant) > self._per_tenant:
                self._end_oldest(tenant)
            while len(self._sessions) > self._max:
                self._end_oldest(self._largest_tenant())
        return token, session

    def _count(self, tenant: str) -> int:
        return sum(1 for s in self._sessions.values() if s.tenant == tenant)

    def _largest_tenant(self) -> str:
        counts = Counter(s.tenant for s in self._sessions.values())
        return max(counts, key=lambda t: counts[t])

    def _end_oldest(self, tenant: str) -> None:
        """The tenant's oldest login ends (the store keeps logins in order)."""
        digest = next(d for d, s in self._sessions.items() if s.tenant == tenant)
        del self._sessions[digest]

    def get(self, token: str | None) -> Session | None:
        """The live session of ``token`` (its idle clock restarted), or None: unknown, idle too long or
        too old (then it is gone for good)."""
        if not token:
            return None
        at = self._now()
        with self._lock:
            digest = _digest(token)
            session = self._sessions.get(digest)
            if session is None:
                return None
            if self._over(session, at):
                del self._sessions[digest]
                return None
            session.seen = at
            return session

    def _over(self, session: Session, at: datetime) -> bool:
        return at - session.seen > self.idle or at - session.started > self.absolute

    def close(self, token: str | None) -> Session | None:
        if not token:
            return None
        with self._lock:
            return self._sessions.pop(_digest(token), None)

    def __len__(self) -> int:
        return len(self._sessions)
