"""When to send a request again: the retry policy both clients apply, as a pure decision."""

from __future__ import annotations

import email.utils
import time
from dataclasses import dataclass

import httpx


@dataclass(frozen=True, slots=True)
class Retry:
    """Send again after 429 (rate limited) and 503 (a dependency down, or the server at capacity), a
    few times, waiting what the server asks for in ``Retry-After`` or else ``backoff`` seconds
    doubling each time.

    Bounded on purpose: a wait longer than ``max_wait`` is not waited for, the error is raised at
    once (an assistant on a live call cannot sleep a minute). A 429 and a 503 ``overloaded`` are
    always safe to send again (the request was refused before anything ran); any other 503 is sent
    again only for requests that are safe to repeat: reads, and writes carrying an ``Idempotency-Key``.
    """

    attempts: int = 2
    max_wait: float = 5.0
    backoff: float = 0.5
    statuses: frozenset[int] = frozenset({429, 503})

    def wait(self, response: httpx.Response, attempt: int, *, idempotent: bool) -> float | None:
        """Seconds to wait before attempt ``attempt + 1``, or None to stop here."""
        status = response.status_code
        refused_before_work = status == 429 or (status == 503 and error_code(response) == "overloaded")
        if attempt >= self.attempts or status not in self.statuses or not (refused_before_work or idempotent):
            return None
        asked = retry_after(response.headers)
        delay = asked if asked is not None else self.backoff * 2**attempt
        return delay if delay <= self.max_wait else None


NO_RETRY = Retry(attempts=0)


def error_code(response: httpx.Response) -> str | None:
    """The ``code`` of Carnet's error body, when the body has been read and is Carnet's."""
    try:
        return str(response.json()["error"]["code"])
    except (httpx.ResponseNotRead, ValueError, KeyError, TypeError):
        return None


def retry_after(headers: httpx.Headers) -> float | None:
    """``Retry-After`` in seconds: a number of seconds or an HTTP date (RFC 9110 §10.2.3)."""
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
