"""The checks at the end, once the assistants have stopped and the last fault has recovered.

- Every accepted intake is followed to its end (``GET /intakes/{id}?wait=true``): done, dead, erased
  with its subject (404 for an erased subject), or lost (404 for a live subject, or still pending
  when the drain's deadline passes).
- Every live subject's records (every status) are listed: each marker appears once (a replayed
  write or intake applied twice shows as a second record), nothing of another tenant or subject,
  every remembered memory still there (forgotten ones aside).
- Every erased subject is asked for through each API (list, search, and the DPO's export): 404,
  and its data key (named by the receipt's subject hash) is no longer in OpenBao's KV store.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

from carnet.bench.soak.assistants import Keys
from carnet.bench.soak.client import RoundRobin
from carnet.bench.soak.ledger import MARKER, Ledger, Subject, memories_in

DRAIN_S = 240.0


def drain(http: RoundRobin, ledger: Ledger, keys: dict[str, Keys]) -> dict[str, int]:
    counts: Counter[str] = Counter(accepted=len(ledger.intakes))
    deadline = time.monotonic() + DRAIN_S
    for intake_id, (tenant, subject_id) in sorted(ledger.intakes.items()):
        subject = ledger.subject(tenant, subject_id)
        while True:
            answer = http.send("GET", "final:intake", f"/api/v1/intakes/{intake_id}", key=keys[tenant].agent,
                               params={"wait": "true", "timeout": 20})
            status = answer.body.get("status") if answer.ok and isinstance(answer.body, dict) else None
            if status in ("done", "dead"):
                counts[status] += 1
                if status == "dead":
                    ledger.violation("intake_dead", intake=intake_id, reason=answer.body.get("reason"))
                ledger.owns(tenant, subject_id, *answer.body.get("memory_ids", []))
                counts["attempts_over_1"] += int(answer.body.get("attempts", 1) > 1)
                break
            if answer.status == 404:
                if subject.erased:
                    counts["erased_with_subject"] += 1
                else:
                    counts["lost"] += 1
                    ledger.violation("intake_lost", intake=intake_id, subject=subject_id, why="404")
                break
            if time.monotonic() > deadline:
                counts["lost"] += 1
                ledger.violation("intake_lost", intake=intake_id, subject=subject_id, why=f"still {status}")
                break
            if not answer.ok:
                time.sleep(0.5)  # an API or store still coming back
    return {k: counts[k] for k in ("accepted", "done", "dead", "erased_with_subject", "lost", "attempts_over_1")}


def records(http: RoundRobin, tenant: str, subject_id: str, key: str) -> list[dict[str, Any]] | None:
    """Every record of the subject (every status, every page); None for a 404."""
    found: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        params: dict[str, Any] = {"status": "any", "limit": 500, **({"cursor": cursor} if cursor else {})}
        answer = http.send("GET", "final:list", f"/api/v1/subjects/{subject_id}/memories", key=key, params=params)
        if answer.status == 404:
            return None
        if not answer.ok:
            raise RuntimeError(f"listing {tenant}/{subject_id}: {answer.status} {answer.code}")
        found.extend(answer.body["items"])
        cursor = answer.body.get("next_cursor")
        if not cursor:
            return found


def check_live(http: RoundRobin, ledger: Ledger, keys: dict[str, Keys]) -> dict[str, int]:
    duplicated = missing = checked = 0
    for subject in [s for s in list(ledger.subjects.values()) if not s.erased]:
        items = records(http, subject.tenant, subject.id, keys[subject.tenant].agent)
        if items is None:
            if subject.live_memories:
                ledger.violation("live_subject_not_found", route="final:list", subject=subject.id)
            continue
        checked += 1
        ledger.inspect(subject.tenant, subject.id, "final:list", {"items": items})
        markers = Counter(m for _, text in memories_in(items) for m in set(MARKER.findall(text)))
        for marker, n in markers.items():
            if n > 1:
                duplicated += n - 1
                ledger.violation("applied_twice", subject=subject.id, marker=marker, records=n)
        shown = {memory_id for memory_id, _ in memories_in(items)}
        for memory_id in sorted(subject.live_memories - shown):
            missing += 1
            ledger.violation("memory_lost", subject=subject.id, memory=memory_id)
    return {"subjects_checked": checked, "duplicated": duplicated, "memories_lost": missing}


def check_erased(http: RoundRobin, ledger: Ledger, keys: dict[str, Keys], apis: int) -> dict[str, int]:
    erased = [s for s in list(ledger.subjects.values()) if s.erased]
    reappeared = 0
    for subject in erased:
        if _found_anywhere(http, ledger, subject, keys[subject.tenant], apis):
            reappeared += 1
    return {"erased_subjects": len(erased), "erased_reappeared": reappeared}


def _found_anywhere(http: RoundRobin, ledger: Ledger, s: Subject, keys: Keys, apis: int) -> bool:
    found = False
    for _ in range(apis):  # round robin: each API is asked each question once
        for method, route, path, key, body in (
                ("GET", "final:list", f"/api/v1/subjects/{s.id}/memories", keys.agent, None),
                ("POST", "final:search", f"/api/v1/subjects/{s.id}/search", keys.agent, {"query": "préfère"}),
                ("GET", "final:export", f"/api/v1/subjects/{s.id}/export", keys.dpo, None)):
            answer = http.send(method, route, path, key=key, json=body)
            if answer.status != 404 and list(memories_in(answer.body)):
                ledger.violation("erased_reappeared", route=route, subject=s.id, status=answer.status)
                found = True
    return found


def keys_left(bao: Any, ledger: Ledger) -> dict[str, int]:
    """Erased subjects whose wrapped data key is still in the KV store (secret/carnet/data-keys/<tenant>/
    <subject hash>): an erasure whose receipt listed ``data_key`` as residue and could not be completed
    (a second DELETE is a 404: the subject is unknown once its records and rows are gone). ``unreported``:
    left although every receipt said ``complete: true`` (a receipt that lied)."""
    import hvac.exceptions

    present: dict[str, set[str]] = {}
    left = unreported = 0
    for subject in [s for s in list(ledger.subjects.values()) if s.erased and s.hashes]:
        if subject.tenant not in present:
            try:
                listed = bao.secrets.kv.v2.list_secrets(f"carnet/data-keys/{subject.tenant}", mount_point="secret")
                present[subject.tenant] = set(listed["data"]["keys"])
            except hvac.exceptions.InvalidPath:
                present[subject.tenant] = set()
        if subject.hashes & present[subject.tenant]:
            left += 1
            unreported += int(not subject.incomplete)
            ledger.violation("erased_key_left", subject=subject.id, hashes=sorted(subject.hashes),
                             receipt_said_incomplete=subject.incomplete)
    return {"data_keys_left": left, "data_keys_left_unreported": unreported}
