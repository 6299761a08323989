"""``bench scenarios --from calls``: a subject's calls posted as an assistant would, and its records read back.

Each call is one ``POST /api/v1/subjects/{id}/messages`` (``session_id`` from the call, each message's
``role``, ``content`` and ``at``; calls longer than the API's 200 messages go in consecutive parts),
with the call's session id as ``Idempotency-Key``; then ``GET /api/v1/intakes/{id}?wait=true`` is
polled until the intake is ``done`` or ``dead`` (or the deadline passes), before the next call: the
server's workers process a subject's intakes in order, and the next call may contradict this one.

A subject without ``calls`` (``fr-dev.json``'s format) is told as ``carnet bench extract`` tells it:
its facts said by the member (role ``user``), one call per day (``calls_of``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from carnet.bench.scenarios_measures import Record

MAX_MESSAGES = 200  # the API's limit per POST …/messages
INTAKE_DEADLINE_SECONDS = 300.0
_FINISHED = ("done", "dead")
# Roles the API accepts, and the spellings scenario files use for them.
ROLES = {"user": "user", "advisor": "advisor", "assistant": "assistant", "system": "system"}


@dataclass
class CallStats:
    calls: int = 0
    intakes: int = 0
    dead: int = 0
    problems: list[str] = field(default_factory=list)  # dead intakes: subject, session, reason code


def calls_of(sdata: dict[str, Any]) -> list[dict[str, Any]]:
    """The subject's ``calls``, or without them one call per day of its facts, each fact a member's message."""
    if "calls" in sdata:
        return list(sdata["calls"])
    calls: list[dict[str, Any]] = []
    for fact in sdata["facts"]:
        day = str(fact["at"])[:10]
        if not calls or calls[-1]["session_id"] != f"facts-{day}":
            calls.append({"session_id": f"facts-{day}", "at": fact["at"], "messages": []})
        calls[-1]["messages"].append({"role": "user", "content": fact["text"], "at": fact["at"]})
    return calls


def api_role(role: str) -> str:
    try:
        return ROLES[role]
    except KeyError:
        raise ValueError(f"message role {role!r}: expected one of {sorted(ROLES)}") from None


def parts(messages: Sequence[dict[str, Any]], size: int = MAX_MESSAGES) -> Iterator[Sequence[dict[str, Any]]]:
    for start in range(0, len(messages), size):
        yield messages[start : start + size]


def tell(http: httpx.Client, subject: str, calls: Sequence[dict[str, Any]], stats: CallStats, *,
         per_post: int = MAX_MESSAGES) -> None:
    """Post each call in order, ``per_post`` messages at a time (as an assistant that posts after every
    exchange: 2), with the call's session id, and wait for its intakes."""
    for call in calls:
        stats.calls += 1
        for n, part in enumerate(parts(call["messages"], per_post)):
            body: dict[str, Any] = {
                "messages": [
                    {"role": api_role(m["role"]), "content": m["content"], "at": m.get("at") or call.get("at")}
                    for m in part
                ]
            }
            if call.get("session_id"):
                body["session_id"] = call["session_id"]
            key = f"{call.get('session_id') or stats.calls}:{n}"
            r = http.post(f"/api/v1/subjects/{subject}/messages", json=body, headers={"Idempotency-Key": key})
            r.raise_for_status()
            stats.intakes += 1
            status, reason = wait(http, str(r.json()["intake_id"]))
            if status == "dead":
                stats.dead += 1
                stats.problems.append(f"{subject}: intake of {key} dead ({reason})")


def wait(
    http: httpx.Client, intake_id: str, *, deadline_seconds: float = INTAKE_DEADLINE_SECONDS
) -> tuple[str, str | None]:
    """The intake's final status (``done`` or ``dead``) and reason code; TimeoutError past the deadline."""
    deadline = time.monotonic() + deadline_seconds
    while True:
        r = http.get(f"/api/v1/intakes/{intake_id}", params={"wait": "true", "timeout": 10})
        r.raise_for_status()
        body = r.json()
        status = str(body["status"])
        if status in _FINISHED:
            return status, body.get("reason")
        if time.monotonic() > deadline:
            raise TimeoutError(f"intake {intake_id} still {status} after {deadline_seconds:.0f}s")


def records(http: httpx.Client, subject: str) -> dict[str, Record]:
    """Every record of the subject, of any kind and status (``GET …/memories?status=any``, paged)."""
    out: dict[str, Record] = {}
    cursor: str | None = None
    while True:
        params: dict[str, Any] = {"status": "any", "limit": 500}
        if cursor:
            params["cursor"] = cursor
        r = http.get(f"/api/v1/subjects/{subject}/memories", params=params)
        if r.status_code == 404:
            return out
        r.raise_for_status()
        page = r.json()
        for m in page["items"]:
            out[m["id"]] = Record(id=m["id"], text=m["text"], status=m["status"], kind=m["kind"])
        cursor = page.get("next_cursor")
        if not cursor:
            return out
