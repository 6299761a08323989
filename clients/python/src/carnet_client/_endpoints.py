"""Every endpoint, written once: a function building the ``Call`` (method, path, body) and naming the
parser of its answer. Both clients turn each function into a method of the same name and signature.

To add an endpoint: a function here, then ``name = bind(_endpoints.name)`` in ``client.py`` and
``async_client.py``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from uuid import UUID

import httpx

from carnet_client._call import Call, json_body, nothing, segment
from carnet_client.inputs import Budgets, ChatMessage, Kind, NewMemory, Role, Status, compact, iso
from carnet_client.models import (
    ApiKey,
    AuditEntry,
    AuditVerdict,
    Context,
    ErasureReceipt,
    Export,
    HistoryEntry,
    IntakeState,
    MaintenanceReport,
    Memory,
    NewApiKey,
    Outcome,
    Page,
    Procedure,
    Ranked,
    Readiness,
    RememberResult,
    Retention,
)

API = "/api/v1"


def _subject(subject_id: str) -> str:
    return f"{API}/subjects/{segment(subject_id, 'subject_id')}"


def _memory(subject_id: str, memory_id: str | UUID) -> str:
    return f"{_subject(subject_id)}/memories/{segment(memory_id, 'memory_id')}"


def _idempotency(key: str | None) -> dict[str, str]:
    return {"Idempotency-Key": key} if key is not None else {}


def health() -> Call[bool]:
    """``GET /healthz``: True when the process answers."""
    return Call("GET", "/healthz", lambda r: json_body(r)["status"] == "ok")


def readiness() -> Call[Readiness]:
    """``GET /readyz``: each dependency's state. A 503 "not ready" is an answer here, not an error."""
    return Call("GET", "/readyz", lambda r: Readiness.from_json(json_body(r)), ok=frozenset({200, 503}))


def remember(subject_id: str, text: str, *, kind: Kind | None = None, occurred_at: datetime | None = None,
             importance: float | None = None, category: str | None = None, tags: Sequence[str] | None = None,
             retention: str | None = None, session_id: str | None = None,
             idempotency_key: str | None = None) -> Call[Outcome]:
    """``POST /subjects/{subject_id}/memories``: store one memory; the outcome says whether it was
    created, merged into a duplicate, superseded an older fact, or was a replay (``unchanged``)."""
    one = NewMemory(text, kind, occurred_at, importance, category, tags, retention, session_id)
    return Call("POST", f"{_subject(subject_id)}/memories", lambda r: Outcome.from_json(json_body(r)),
                json=one.as_json(), headers=_idempotency(idempotency_key), ok=frozenset({201}),
                idempotent=idempotency_key is not None)


def submit_messages(subject_id: str, messages: Sequence[ChatMessage], *, session_id: str | None = None,
                    idempotency_key: str | None = None) -> Call[IntakeState]:
    """``POST /subjects/{subject_id}/messages``: hand over raw conversation messages; answered (202)
    before any extraction. The same idempotency key for the same subject returns the intake queued. The
    posts of one ``session_id`` are read as one call (each after the session's earlier messages), so a
    call may be handed over exchange by exchange."""
    body = compact(session_id=session_id, messages=[m.as_json() for m in messages])
    return Call("POST", f"{_subject(subject_id)}/messages", lambda r: IntakeState.from_json(json_body(r)),
                json=body, headers=_idempotency(idempotency_key), ok=frozenset({202}),
                idempotent=idempotency_key is not None)


def intake(intake_id: str | UUID, *, wait: bool = False, timeout: float | None = None) -> Call[IntakeState]:
    """``GET /intakes/{intake_id}``; with ``wait``, answered once it is done or dead (or after the
    server's bound): read your own writes."""
    params = compact(wait="true" if wait else None, timeout=timeout)
    return Call("GET", f"{API}/intakes/{segment(intake_id, 'intake_id')}",
                lambda r: IntakeState.from_json(json_body(r)), params=params)


def remember_batch(subject_id: str, memories: Sequence[NewMemory], *,
                   idempotency_key: str | None = None) -> Call[RememberResult]:
    """``POST /subjects/{subject_id}/memories`` with ``{"memories": [...]}``. With an idempotency key,
    each item is replayed on its own (the server keeps the batch's items apart from single requests
    under the same key); the same key with another body raises ``IdempotencyKeyReused``."""
    body = {"memories": [m.as_json() for m in memories]}
    return Call("POST", f"{_subject(subject_id)}/memories", lambda r: RememberResult.from_json(json_body(r)),
                json=body, headers=_idempotency(idempotency_key), ok=frozenset({201}),
                idempotent=idempotency_key is not None)


def _page(response: httpx.Response) -> Page[Memory]:
    d = json_body(response)
    return Page(tuple(Memory.from_json(m) for m in d["items"]), d.get("next_cursor"), int(d.get("unreadable", 0)))


def list_memories(subject_id: str, *, kind: Kind | None = None, status: Status | None = None,
                  category: str | None = None, limit: int | None = None,
                  cursor: str | None = None) -> Call[Page[Memory]]:
    """``GET /subjects/{subject_id}/memories``: one page (``status`` defaults to ``active`` on the server)."""
    params = compact(kind=kind, status=status, category=category, limit=limit, cursor=cursor)
    return Call("GET", f"{_subject(subject_id)}/memories", _page, params=params)


def _memories(response: httpx.Response) -> tuple[Memory, ...]:
    return tuple(Memory.from_json(m) for m in json_body(response)["items"])


def lookup(subject_id: str, identifier: str, *, limit: int | None = None,
           include_superseded: bool | None = None) -> Call[tuple[Memory, ...]]:
    """``POST /subjects/{subject_id}/memories/lookup``: the records naming a claim or contract
    reference, exactly (blind index). A POST so the identifier never sits in a URL."""
    body = compact(identifier=identifier, limit=limit, include_superseded=include_superseded)
    return Call("POST", f"{_subject(subject_id)}/memories/lookup", _memories, json=body)


def get_memory(subject_id: str, memory_id: str | UUID) -> Call[Memory]:
    """``GET /subjects/{subject_id}/memories/{memory_id}``: one record, whatever its status."""
    return Call("GET", _memory(subject_id, memory_id), lambda r: Memory.from_json(json_body(r)))


def rectify(subject_id: str, memory_id: str | UUID, *, text: str | None = None, category: str | None = None,
            importance: float | None = None, tags: Sequence[str] | None = None,
            occurred_at: datetime | None = None, retention: str | None = None) -> Call[Memory]:
    """``PATCH /subjects/{subject_id}/memories/{memory_id}`` (role ``dpo``, GDPR art. 16): the fields
    given are corrected, the others kept. Not sent again on 503: its history would say it twice."""
    body = compact(text=text, category=category, importance=importance,
                   tags=list(tags) if tags is not None else None, occurred_at=iso(occurred_at), retention=retention)
    return Call("PATCH", _memory(subject_id, memory_id), lambda r: Memory.from_json(json_body(r)), json=body,
                idempotent=False)


def restore(subject_id: str, memory_id: str | UUID, *, reason: str | None = None) -> Call[Memory]:
    """``POST /subjects/{subject_id}/memories/{memory_id}/restore`` (role ``supervisor`` or ``dpo``): a
    superseded record is current again; ``NotSuperseded`` (409) if it was not superseded. ``reason`` is
    kept only sealed, where the tenant keeps corrections. Not sent again on 503: history would say it twice."""
    return Call("POST", f"{_memory(subject_id, memory_id)}/restore", lambda r: Memory.from_json(json_body(r)),
                json=compact(reason=reason), idempotent=False)


def forget(subject_id: str, memory_id: str | UUID) -> Call[None]:
    """``DELETE /subjects/{subject_id}/memories/{memory_id}``: delete one record physically."""
    return Call("DELETE", _memory(subject_id, memory_id), nothing, ok=frozenset({204}), idempotent=False)


def history(subject_id: str, memory_id: str | UUID) -> Call[tuple[HistoryEntry, ...]]:
    """``GET /subjects/{subject_id}/memories/{memory_id}/history`` (role ``dpo``)."""
    return Call("GET", f"{_memory(subject_id, memory_id)}/history",
                lambda r: tuple(HistoryEntry.from_json(h) for h in json_body(r)["history"]))


def search(subject_id: str, query: str, *, k: int | None = None, kinds: Sequence[Kind] | None = None,
           include_superseded: bool | None = None, min_relevance: float | None = None) -> Call[tuple[Ranked, ...]]:
    """``POST /subjects/{subject_id}/search``: hybrid retrieval, best first."""
    body = compact(query=query, k=k, kinds=list(kinds) if kinds is not None else None,
                   include_superseded=include_superseded, min_relevance=min_relevance)
    return Call("POST", f"{_subject(subject_id)}/search",
                lambda r: tuple(Ranked.from_json(h) for h in json_body(r)["results"]), json=body)


def assemble(subject_id: str, query: str, *, budgets: Budgets | None = None, agent_id: str | None = None,
             queue: str | None = None) -> Call[Context]:
    """``POST /context/assemble``: what to put in the prompt before an LLM call. ``agent_id`` and
    ``queue`` bring in the team procedures scoped to them (tenant-wide ones always apply)."""
    body = compact(subject_id=subject_id, query=query, budgets=budgets.as_json() if budgets else None,
                   agent_id=agent_id, queue=queue)
    return Call("POST", f"{API}/context/assemble", lambda r: Context.from_json(json_body(r)), json=body)


def export(subject_id: str) -> Call[Export]:
    """``GET /subjects/{subject_id}/export`` (role ``dpo``, GDPR art. 15/20), parsed whole. For a large
    subject, ``export_to`` writes the document to a file without holding it in memory."""
    return Call("GET", f"{_subject(subject_id)}/export", lambda r: Export.from_json(json_body(r)))


def erase_subject(subject_id: str) -> Call[ErasureReceipt]:
    """``DELETE /subjects/{subject_id}`` (role ``dpo``, GDPR art. 17): everything, then the data key."""
    return Call("DELETE", _subject(subject_id), lambda r: ErasureReceipt.from_json(json_body(r)), idempotent=False)


def retention(subject_id: str) -> Call[Retention]:
    """``GET /subjects/{subject_id}/retention`` (role ``dpo``): legal hold and end of relationship."""
    return Call("GET", f"{_subject(subject_id)}/retention", lambda r: Retention.from_json(json_body(r)))


def set_legal_hold(subject_id: str, *, reference: str | None = None) -> Call[Retention]:
    """``PUT /subjects/{subject_id}/legal-hold`` (role ``dpo``): retention, decay and erasure stop until
    lifted; ``reference`` is a case reference, never personal data."""
    return Call("PUT", f"{_subject(subject_id)}/legal-hold", lambda r: Retention.from_json(json_body(r)),
                json=compact(reference=reference))


def lift_legal_hold(subject_id: str) -> Call[Retention]:
    """``DELETE /subjects/{subject_id}/legal-hold`` (role ``dpo``)."""
    return Call("DELETE", f"{_subject(subject_id)}/legal-hold", lambda r: Retention.from_json(json_body(r)))


def set_relationship_end(subject_id: str, ended_at: datetime | None) -> Call[Retention]:
    """``PUT /subjects/{subject_id}/relationship-end`` (role ``dpo``): starts the clock of classes counted
    from the end of the relationship; None reopens it. ``ended_at`` needs a time zone."""
    return Call("PUT", f"{_subject(subject_id)}/relationship-end", lambda r: Retention.from_json(json_body(r)),
                json={"ended_at": None if ended_at is None else iso(ended_at)})


def maintain(*, dry_run: bool = False) -> Call[MaintenanceReport]:
    """``POST /admin/maintain`` (role ``admin``): retention and decay for the key's tenant now."""
    return Call("POST", f"{API}/admin/maintain", lambda r: MaintenanceReport.from_json(json_body(r)),
                json={"dry_run": dry_run}, idempotent=False)


def _entries(response: httpx.Response) -> tuple[AuditEntry, ...]:
    return tuple(AuditEntry.from_json(json.loads(line)) for line in response.text.splitlines() if line.strip())


def audit(*, after_seq: int | None = None, limit: int | None = None) -> Call[tuple[AuditEntry, ...]]:
    """``GET /audit`` (roles ``dpo`` or ``admin``): the tenant's entries after ``after_seq``, read whole;
    ``iter_audit`` streams them instead."""
    return Call("GET", f"{API}/audit", _entries, params=compact(after_seq=after_seq, limit=limit))


def verify_audit() -> Call[AuditVerdict]:
    """``GET /audit/verify``: walk the tenant's hash chain and name every entry that does not hold."""
    return Call("GET", f"{API}/audit/verify", lambda r: AuditVerdict.from_json(json_body(r)))


def list_api_keys() -> Call[tuple[ApiKey, ...]]:
    """``GET /admin/apikeys`` (role ``admin``): the tenant's keys, revoked ones included."""
    return Call("GET", f"{API}/admin/apikeys", lambda r: tuple(ApiKey.from_json(k) for k in json_body(r)["items"]))


def create_api_key(*, roles: Sequence[Role], rate_limit: str | None = None,
                   name: str | None = None) -> Call[NewApiKey]:
    """``POST /admin/apikeys`` (role ``admin``): a key of the caller's tenant; ``rate_limit`` like
    ``"50/second"``. The key is in this answer only."""
    body = compact(roles=list(roles), rate_limit=rate_limit, name=name)
    return Call("POST", f"{API}/admin/apikeys", lambda r: NewApiKey.from_json(json_body(r)), json=body,
                ok=frozenset({201}), idempotent=False)


def revoke_api_key(key_id: str) -> Call[None]:
    """``DELETE /admin/apikeys/{key_id}`` (role ``admin``): the next request with that key gets 401."""
    return Call("DELETE", f"{API}/admin/apikeys/{segment(key_id, 'key_id')}", nothing, ok=frozenset({204}),
                idempotent=False)


def _procedure(procedure_id: str | UUID) -> str:
    return f"{API}/procedures/{segment(procedure_id, 'procedure_id')}"


def list_procedures(*, status: str | None = None) -> Call[tuple[Procedure, ...]]:
    """``GET /procedures``: a supervisor sees every status (``status`` filters: proposed, approved,
    rejected, retired); an agent the approved ones only."""
    return Call("GET", f"{API}/procedures",
                lambda r: tuple(Procedure.from_json(p) for p in json_body(r)["items"]), params=compact(status=status))


def propose_procedure(text: str, *, agent_id: str | None = None, queue: str | None = None,
                      applies_when: Sequence[str] | None = None) -> Call[Procedure]:
    """``POST /procedures`` (role ``agent`` or ``supervisor``): proposed, never used before a supervisor
    approves it. The same text while proposed or approved answers the existing one, so it is safe to send again."""
    body = compact(text=text, agent_id=agent_id, queue=queue,
                   applies_when=list(applies_when) if applies_when is not None else None)
    return Call("POST", f"{API}/procedures", lambda r: Procedure.from_json(json_body(r)), json=body,
                ok=frozenset({201}))


def get_procedure(procedure_id: str | UUID) -> Call[Procedure]:
    """``GET /procedures/{procedure_id}`` (an agent: approved ones only)."""
    return Call("GET", _procedure(procedure_id), lambda r: Procedure.from_json(json_body(r)))


def _decision(procedure_id: str | UUID, decision: str) -> Call[Procedure]:
    return Call("POST", f"{_procedure(procedure_id)}/{decision}", lambda r: Procedure.from_json(json_body(r)),
                idempotent=False)


def approve_procedure(procedure_id: str | UUID) -> Call[Procedure]:
    """``POST /procedures/{procedure_id}/approve`` (role ``supervisor``): assemble uses it from now on."""
    return _decision(procedure_id, "approve")


def reject_procedure(procedure_id: str | UUID) -> Call[Procedure]:
    """``POST /procedures/{procedure_id}/reject`` (role ``supervisor``)."""
    return _decision(procedure_id, "reject")


def retire_procedure(procedure_id: str | UUID) -> Call[Procedure]:
    """``POST /procedures/{procedure_id}/retire`` (role ``supervisor``): assemble stops using it."""
    return _decision(procedure_id, "retire")
