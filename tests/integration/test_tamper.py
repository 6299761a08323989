"""The tamper suite: one damaged record, or a damaged data key, never blocks a subject's rights.

For each kind of damage done to a real embedded store (a byte of a ciphertext, a payload that no longer
decodes, the wrapped data key, its key-store entry altered, removed or truncated), every read of the
subject answers (the damaged records skipped, counted in ``/metrics``, in the audit trail and in the
answer), ``get`` of a damaged record is a clear 410, export is valid JSON naming it by id with a reason
code, forgetting it deletes it without decrypting, and erasure completes.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from qdrant_edge import UpdateOperation

from carnet.adapters.qdrant_edge import EdgeVectorIndex, scoped_filter
from carnet.api.app import create_app
from carnet.api.server import running
from carnet.bootstrap import Container
from carnet.crypto.keystore import FileKeyStore
from carnet.crypto.sealed_index import PREFIX, SealedIndex
from carnet.domain.records import Scope
from carnet.ports import RecordFilter
from carnet.services import export, memories, recall
from carnet.services.apikeys import create_key
from carnet.services.assemble import assemble, budgets
from carnet.services.erase import erase_subject
from carnet.services.scope import scope_for

TENANT = "assur-nord"
SUBJECT = "ADH-4410"
TEXTS = [
    "Le membre habite à Lyon 7e.",
    "Le membre préfère être contacté par email le matin.",
    "Mme Laurence Vasseur a demandé un échéancier pour sa cotisation.",
    "Le membre a un contrat habitation depuis 2019.",
]
EVERY = RecordFilter(statuses=None)


@dataclass(frozen=True)
class Damage:
    name: str
    reason: str  # the reason code every answer must give for the damaged records
    whole_subject: bool  # the subject's data key is damaged: every record is unreadable
    apply: Callable[[Container, Scope, str], None]  # (container, scope, id of the record to damage)


def _inner(c: Container) -> EdgeVectorIndex:
    index = c.deps.index
    assert isinstance(index, SealedIndex) and isinstance(index.inner, EdgeVectorIndex)
    return index.inner


def _flip_ciphertext_byte(c: Container, scope: Scope, mid: str) -> None:
    raw = _inner(c).get(scope, [mid])[0]
    blob = bytearray(base64.b64decode(raw.text.removeprefix(PREFIX)))
    blob[-20] ^= 0x01  # inside the ciphertext (the tag is the last 16 bytes)
    _inner(c).replace_payload(scope, [replace(raw, text=PREFIX + base64.b64encode(bytes(blob)).decode())])


def _set_payload(c: Container, scope: Scope, mid: str, fields: dict[str, Any]) -> None:
    _inner(c)._shard.update(UpdateOperation.set_payload_by_filter(scoped_filter(scope, ids=[mid]), fields))


def _date_out_of_range(c: Container, scope: Scope, mid: str) -> None:
    _set_payload(c, scope, mid, {"valid_from": 1e15})  # year ~31 million: no datetime holds it


def _field_missing(c: Container, scope: Scope, mid: str) -> None:
    filt = scoped_filter(scope, ids=[mid])
    _inner(c)._shard.update(UpdateOperation.delete_payload_by_filter(filt, ["recorded_at"]))


def _key_file(c: Container, scope: Scope) -> Path:
    store = c.keyring._store
    assert isinstance(store, FileKeyStore)
    return store._path(scope.tenant, scope.subject)


def _edit_key_entry(field: str, change: Callable[[Any], Any]) -> Callable[[Container, Scope, str], None]:
    def apply(c: Container, scope: Scope, _: str) -> None:
        path = _key_file(c, scope)
        doc = json.loads(path.read_text())
        doc[field] = change(doc[field])
        path.write_text(json.dumps(doc))

    return apply


def _flip_wrapped(ciphertext: str) -> str:
    """One character of the wrapped key's base64 body changed (the ``vN:`` prefix kept)."""
    at = len(ciphertext) - 6
    return ciphertext[:at] + ("A" if ciphertext[at] != "A" else "B") + ciphertext[at + 1:]


def _remove_key_entry(c: Container, scope: Scope, _: str) -> None:
    _key_file(c, scope).unlink()


def _truncate_key_file(c: Container, scope: Scope, _: str) -> None:
    path = _key_file(c, scope)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


DAMAGES = [
    Damage("ciphertext_byte", "envelope_invalid", False, _flip_ciphertext_byte),
    Damage("date_out_of_range", "payload_invalid", False, _date_out_of_range),
    Damage("field_missing", "payload_invalid", False, _field_missing),
    Damage("wrapped_key", "key_unwrap_failed", True, _edit_key_entry("ciphertext", _flip_wrapped)),
    Damage("key_entry_altered", "key_destroyed", True, _edit_key_entry("key_id", lambda k: "x" + k)),
    Damage("key_entry_removed", "key_destroyed", True, _remove_key_entry),
    Damage("key_file_truncated", "key_store_corrupt", True, _truncate_key_file),
]


@pytest.fixture
def http(container: Container) -> Iterator[dict[str, httpx.Client]]:
    keys = {role: create_key(container.deps.catalog, container.pepper, tenant=TENANT, roles=[role])[0]
            for role in ("agent", "dpo")}
    with running(create_app(container)) as base:
        clients = {role: httpx.Client(base_url=base, headers={"Authorization": f"Bearer {k}"}, timeout=30)
                   for role, k in keys.items()}
        try:
            yield clients
        finally:
            for client in clients.values():
                client.close()


def _seed(agent: httpx.Client) -> list[str]:
    ids = []
    for text in TEXTS:
        r = agent.post(f"/api/v1/subjects/{SUBJECT}/memories", json={"text": text})
        assert r.status_code == 201, r.text
        ids.append(r.json()["memory"]["id"])
    return ids


def _damage(c: Container, damage: Damage, ids: list[str]) -> tuple[Scope, set[str]]:
    scope = scope_for(c.deps, TENANT, SUBJECT)
    damage.apply(c, scope, ids[0])
    c.keyring.forget(scope.tenant, scope.subject)  # as after the key cache's TTL, or a restart
    c.deps.pii.maps.forget(scope)
    return scope, set(ids) if damage.whole_subject else {ids[0]}


@pytest.mark.parametrize("damage", DAMAGES, ids=lambda d: d.name)
def test_over_rest_every_right_still_answers(damage: Damage, http: dict[str, httpx.Client],
                                             container: Container) -> None:
    agent, dpo = http["agent"], http["dpo"]
    ids = _seed(agent)
    _, damaged = _damage(container, damage, ids)
    readable = set(ids) - damaged
    base = f"/api/v1/subjects/{SUBJECT}"

    listed = agent.get(f"{base}/memories", params={"status": "any"})
    assert listed.status_code == 200, listed.text
    assert {m["id"] for m in listed.json()["items"]} == readable and listed.json()["unreadable"] == len(damaged)

    found = agent.post(f"{base}/search", json={"query": TEXTS[0], "k": 10})
    assert found.status_code == 200, found.text
    assert {r["memory"]["id"] for r in found.json()["results"]} <= readable
    assert found.json()["unreadable"] == len(damaged)

    ctx = agent.post("/api/v1/context/assemble", json={"subject_id": SUBJECT, "query": TEXTS[0]})
    assert ctx.status_code == 200, ctx.text
    assert {r["memory"]["id"] for r in ctx.json()["memories"]} <= readable
    assert ctx.json()["stats"]["unreadable"] == len(damaged)

    one = agent.get(f"{base}/memories/{ids[0]}")
    assert one.status_code == 410 and one.json()["error"]["code"] == "memory_unreadable", one.text
    assert one.json()["error"]["reason"] == damage.reason
    for mid in readable:
        assert agent.get(f"{base}/memories/{mid}").status_code == 200

    exported = dpo.get(f"{base}/export")
    assert exported.status_code == 200
    doc = json.loads(exported.content)  # a valid JSON document, whatever broke
    assert doc["count"] == len(ids) and doc["complete"] is True and doc["unreadable"] == len(damaged)
    assert {r["memory"]["id"] for r in doc["records"] if "memory" in r} == readable
    assert [{k: r[k] for k in ("id", "unreadable")} for r in doc["records"] if "memory" not in r] == [
        {"id": mid, "unreadable": damage.reason} for mid in sorted(damaged)]

    metrics = agent.get("/metrics").text
    for operation in ("list", "search", "assemble", "export", "get"):
        assert f'carnet_unreadable_records_total{{operation="{operation}",reason="{damage.reason}"}}' in metrics
    container.audit.flush()
    entries = [e for e in container.audit.log.entries(TENANT) if e.event.action == "record.unreadable"]
    assert entries and damaged <= {t for e in entries for t in e.event.targets}
    assert all(e.event.detail.get("reason") == damage.reason for e in entries)
    for text in TEXTS:
        assert text not in str([e.event for e in entries])

    gone = agent.delete(f"{base}/memories/{ids[0]}")  # forgetting a damaged record: no decryption needed
    assert gone.status_code == 204, gone.text
    assert agent.get(f"{base}/memories/{ids[0]}").status_code == 404

    receipt = dpo.delete(base)
    assert receipt.status_code == 200, receipt.text
    body = receipt.json()
    assert body["complete"] is True and body["residue"] == [], body
    assert body["records_deleted"] == len(ids) - 1 and body["verified"]["data_key_gone"]
    assert dpo.get(f"{base}/export").status_code == 404


@pytest.mark.parametrize("damage", DAMAGES, ids=lambda d: d.name)
def test_through_the_services_every_right_still_answers(damage: Damage, http: dict[str, httpx.Client],
                                                        container: Container) -> None:
    ids = _seed(http["agent"])
    scope, damaged = _damage(container, damage, ids)
    deps = container.deps
    page = memories.list_memories(deps, tenant=TENANT, subject_id=SUBJECT, status=None)
    assert {m.id for m in page.items} == set(ids) - damaged
    assert {(u.id, u.reason) for u in page.unreadable} == {(mid, damage.reason) for mid in damaged}
    ranked = recall.search(deps, tenant=TENANT, subject_id=SUBJECT, query=recall.Query(TEXTS[0], k=10))
    assert {u.id for u in ranked.unreadable} == damaged
    ctx = assemble(deps, tenant=TENANT, subject_id=SUBJECT, query=TEXTS[0], budget=budgets(deps, overrides={}))
    assert ctx.stats["unreadable"] == len(damaged)
    out = export.export_subject(deps, tenant=TENANT, subject_id=SUBJECT)
    records = list(out.records)
    assert {r.id for r in records if isinstance(r, export.NotExported)} == damaged
    receipt = erase_subject(deps, tenant=TENANT, subject_id=SUBJECT)  # the CLI's path
    assert receipt.complete and receipt.records_deleted == len(ids) and receipt.residue == ()
    assert deps.index.count(scope, where=EVERY) == 0
