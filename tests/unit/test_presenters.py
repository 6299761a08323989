"""Each response shape is defined once (``carnet.entrypoints.presenters``): the REST routes publish the
presenters' models, and the MCP tools' ``"format": "full"`` answers are the same presenters' JSON. The
keys and their order are pinned here: clients (and the SDK) read them."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from fastapi.routing import APIRoute
from hypothesis import given, settings
from hypothesis import strategies as st

from carnet.domain.procedures import Conflict, ProcedureStatus, TeamProcedure
from carnet.domain.records import HistoryEntry, Kind, Memory, Scope, Source, Status
from carnet.domain.scoring import Signals
from carnet.domain.unreadable import Found
from carnet.entrypoints.http import (
    routes_admin,
    routes_audit,
    routes_context,
    routes_health,
    routes_intakes,
    routes_memories,
    routes_procedures,
    routes_subjects,
)
from carnet.entrypoints.http.presented import presented
from carnet.entrypoints.presenters.context import context_out
from carnet.entrypoints.presenters.errors import error_body
from carnet.entrypoints.presenters.health import ready_out
from carnet.entrypoints.presenters.memories import history_entry_out, memory_out
from carnet.entrypoints.presenters.plain import as_json
from carnet.entrypoints.presenters.remember import RememberOut, remember_out
from carnet.entrypoints.presenters.search import search_out
from carnet.services.memories.assemble import Context
from carnet.services.memories.recall import Ranked
from carnet.services.memories.remember import Outcome
from carnet.services.procedures import TeamPick

AT = datetime(2025, 3, 1, 10, 0, tzinfo=UTC)
SIGNALS = Signals(0.812345, 0.7, 0.65, 0.1, 0.5, 0.33333, 0.2, 0.7)
MEMORY_KEYS = ["id", "kind", "text", "status", "category", "tags", "importance", "confidence", "access_count",
               "reinforcement_count", "occurred_at", "valid_from", "valid_to", "recorded_at", "updated_at",
               "last_accessed_at", "expires_at", "retention", "superseded_by", "sources", "session_id", "agent_id",
               "special_categories"]


def _memory(n: int = 1) -> Memory:
    return Memory(id=f"m{n}", scope=Scope("t", "s"), kind=Kind.FACT, text="Le membre préfère l'email.",
                  pseudo_text="x", recorded_at=AT, valid_from=AT, updated_at=AT, tags=("a",), confidence=0.712345,
                  sources=(Source("api", "k:1", "sess"),), special=("health",), status=Status.SUPERSEDED,
                  superseded_by="m9")


def test_a_record_keeps_its_keys_in_order_and_its_values_as_json() -> None:
    shown = as_json(memory_out(_memory()))
    assert list(shown) == MEMORY_KEYS
    assert shown["kind"] == "fact" and shown["status"] == "superseded" and shown["confidence"] == 0.7123
    assert shown["occurred_at"] == shown["valid_from"] == AT.isoformat() and shown["valid_to"] is None
    assert shown["sources"] == [{"kind": "api", "ref": "k:1", "session_id": "sess"}]
    assert shown["special_categories"] == ["health"] and shown["tags"] == ["a"]


def test_a_ranked_record_has_its_rounded_score_and_signals() -> None:
    shown = as_json(search_out(Found([Ranked(_memory(), 0.912345, SIGNALS)])))
    assert list(shown) == ["results", "unreadable"] and shown["unreadable"] == 0
    (r,) = shown["results"]
    assert list(r) == ["memory", "score", "signals"] and r["score"] == 0.9123
    assert r["signals"] == SIGNALS.as_dict()


def test_a_context_keeps_its_keys_and_hides_the_team_procedures_key_ids() -> None:
    proc = TeamProcedure(id="p1", tenant="t", text="Toujours demander des photos.", status=ProcedureStatus.APPROVED,
                         proposed_by="k1", created_at=AT, updated_at=AT, queue="q", decided_by="k2")
    ctx = Context([Ranked(_memory(), 0.9, SIGNALS)], [], [], "## prompt", {"count": 1, "top_score": 0.9},
                  profile=[_memory(2)], team=[TeamPick(proc, 0.87654, (Conflict("email", "Pas d'email."),))])
    shown = as_json(context_out(ctx))
    assert list(shown) == ["profile", "memories", "episodes", "procedures", "team_procedures", "prompt", "stats"]
    assert list(shown["profile"][0]) == ["memory", "kinds"]
    assert shown["team_procedures"] == [{"id": "p1", "text": "Toujours demander des photos.", "agent_id": None,
                                         "queue": "q", "score": 0.8765, "conflict": True,
                                         "conflicts": [{"channel": "email", "constraint": "Pas d'email."}]}]
    assert shown["stats"] == {"count": 1, "top_score": 0.9} and isinstance(shown["stats"]["count"], int)


finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=200), prompt=st.text(max_size=200), score=finite,
       signals=st.lists(finite, min_size=8, max_size=8), stats=st.dictionaries(
           st.text(max_size=12), st.one_of(finite, st.integers(-(2**53), 2**53)), max_size=5))
def test_the_native_body_is_the_same_json_as_the_presenters_dict(text: str, prompt: str, score: float,
                                                                   signals: list[float],
                                                                   stats: dict[str, float | int]) -> None:
    """The hot paths answer ``presented`` (pydantic-core's serialiser): parsed back, it is exactly what
    ``as_json`` gives the MCP tools, whatever the text (any Unicode, control characters, lone
    surrogates excepted by JSON itself) and whatever the numbers."""
    m = Memory(id="m1", scope=Scope("t", "s"), kind=Kind.FACT, text=text, pseudo_text="x", recorded_at=AT,
               valid_from=AT, updated_at=AT)
    ctx = Context([Ranked(m, score, Signals(*signals))], [], [], prompt, stats, profile=[m])
    for out in (context_out(ctx), search_out(Found([Ranked(m, score, Signals(*signals))]))):
        response = presented(out)
        assert response.media_type == "application/json" and response.status_code == 200
        assert json.loads(bytes(response.body)) == as_json(out)
    assert presented(ready_out({"kms": "down"}), status_code=503).status_code == 503


def test_remember_answers_the_outcome_at_the_top_for_a_single_memory_only() -> None:
    outcomes = [Outcome("superseded", _memory(1), None, ("m0",), "newer"), Outcome("merged", _memory(2), "m7")]
    batch = remember_out(outcomes, single=False)
    assert list(batch.model_dump(exclude_unset=True)) == ["results", "created", "merged", "superseded"]
    assert (batch.created, batch.merged, batch.superseded) == (["m1"], ["m7"], ["m0"])
    single = remember_out(outcomes[:1], single=True).model_dump(mode="json", exclude_unset=True)
    assert list(single) == list(RememberOut.model_fields)
    assert {k: single[k] for k in ("action", "merged_into", "superseded", "rule")} == {
        "action": "superseded", "merged_into": None, "superseded": ["m0"], "rule": "newer"}
    assert list(single["results"][0]) == ["action", "memory", "merged_into", "superseded", "rule"]


def test_history_errors_and_readiness() -> None:
    assert as_json(history_entry_out(HistoryEntry("m1", AT, "updated", "k1", {"field": "text"}))) == {
        "at": AT.isoformat(), "action": "updated", "actor": "k1", "detail": {"field": "text"}}
    assert error_body("not_found", "no such memory", memory_id="m1") == {
        "error": {"code": "not_found", "message": "no such memory", "memory_id": "m1"}}
    assert as_json(ready_out({"kms": "ok", "catalog": "catalog_unavailable"})) == {
        "status": "not_ready", "checks": {"kms": "ok", "catalog": "catalog_unavailable"}}
    assert ready_out({"kms": "ok"}).status == "ready"


def test_every_json_route_publishes_a_presenters_model() -> None:
    """No route answers a shape of its own: every ``response_model`` is a presenter's (``/healthz``'s
    ``{"status": "ok"}`` is published from its return annotation)."""
    routes = [r for m in (routes_admin, routes_audit, routes_context, routes_health, routes_intakes, routes_memories,
                          routes_procedures, routes_subjects) for r in m.router.routes if isinstance(r, APIRoute)]
    models = {r.path: r.response_model for r in routes if r.response_model is not None and r.path != "/healthz"}
    assert len(models) >= 20
    assert all(m.__module__.startswith("carnet.entrypoints.presenters.") for m in models.values()), models
