"""Post, then redirect, then get: what a page shows after a form, held in the viewer's server-side session
behind an opaque token.

A posted form does its action, keeps here what the next page shows (the member, the question, the
notice), and answers 303 to a GET page whose URL carries only the token (``/console/member?view=…``):
never a member id, never a question (URLs end up in proxies' logs and browsers' histories). Back and
Reload then re-ask the server for a GET page, which shows the same screen again from the session, so the
browser never has to re-post a form (Chromium's ``ERR_CACHE_MISS``: the pages are ``no-store``).

A token is 128 random bits, means something only inside the session that made it (another session, or
the same one after logout, finds nothing), and dies with the session; a session keeps its ``CAP``
latest screens. A new API key is shown once: the first GET takes it out of its screen."""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace

from carnet.services.rights.erase import ErasureReceipt

CAP = 50  # screens one session keeps (the oldest goes first): enough for a working session's Back button


@dataclass(frozen=True, slots=True)
class Screen:
    page: str  # the GET page that shows it, its path under /console: member, dpo, dpo/receipt, admin, procedures
    subject: str | None = None
    mode: str = "timeline"  # member page: timeline, search or assemble
    query: str = ""
    include_superseded: bool = False
    done: str | None = None  # the notice of what the form did
    count: int = 0  # how many it did (intakes sent back)
    secret: str | None = None  # a new API key, shown by the first GET only
    receipt: ErasureReceipt | None = None


class Screens:
    """One session's screens by token (thread-safe: a browser may load two pages at once)."""

    def __init__(self, cap: int = CAP) -> None:
        self._cap = cap
        self._held: OrderedDict[str, Screen] = OrderedDict()
        self._lock = threading.Lock()

    def keep(self, screen: Screen) -> str:
        token = secrets.token_urlsafe(16)
        with self._lock:
            self._held[token] = screen
            while len(self._held) > self._cap:
                self._held.popitem(last=False)
        return token

    def show(self, token: str | None, *, page: str) -> Screen | None:
        """The screen of ``token`` if it belongs to ``page``; a secret it holds is handed out once."""
        if not token:
            return None
        with self._lock:
            screen = self._held.get(token)
            if screen is None or screen.page != page:
                return None
            if screen.secret is not None:
                self._held[token] = replace(screen, secret=None)
            return screen

    def __len__(self) -> int:
        return len(self._held)
