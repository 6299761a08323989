"""Assemble: the best records per tier under per-tier budgets, rendered as a prompt block."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from carnet.domain.budget import TierBudget, pack
from carnet.domain.embedding_text import query_text
from carnet.domain.profile import profile_kinds
from carnet.domain.prompt import render
from carnet.domain.records import Kind, Memory
from carnet.domain.text import estimate_tokens
from carnet.domain.unreadable import Skipped, Unreadable
from carnet.errors import InvalidBudget
from carnet.services import pii
from carnet.services.memories.profile import profile_tier
from carnet.services.memories.recall import (
    Query,
    Ranked,
    ensure_subject_exists,
    keyword_vector,
    rank,
    reveal_ranked,
    validate_query,
)
from carnet.services.needs import AssembleNeeds
from carnet.services.procedures import TeamPick, TeamSource, flag_conflicts, relevant
from carnet.services.scope import scope_for


@dataclass(frozen=True, slots=True)
class Budgets:
    memories: TierBudget
    episodes: TierBudget
    procedures: TierBudget
    min_relevance: float
    profile: TierBudget = field(default_factory=lambda: TierBudget(0, 0))  # 0: no profile tier


@dataclass(frozen=True, slots=True)
class Context:
    memories: list[Ranked]
    episodes: list[Ranked]
    procedures: list[Ranked]
    prompt: str
    stats: dict[str, float | int]
    unreadable: tuple[Unreadable, ...] = ()  # candidates that could not be read, left out (stats counts them)
    profile: list[Memory] = field(default_factory=list)  # the profile tier, newest first (never ranked)
    team: list[TeamPick] = field(default_factory=list)  # the team's approved procedures the query calls for
    # each profile record's kinds (``domain.profile.profile_kinds``), read once for the prompt and the answer
    profile_kinds: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def kinds_of(self, m: Memory) -> tuple[str, ...]:
        known = self.profile_kinds.get(m.id)
        return profile_kinds(m.text) if known is None else known


def budgets(deps: AssembleNeeds, *, overrides: dict[str, int | float | None]) -> Budgets:
    """Request overrides on top of the configured defaults; any budget <= 0 is refused (the profile
    tier is turned off in the settings, not per request)."""
    d = deps.assemble

    def tier(name: str, default: TierBudget) -> TierBudget:
        items = overrides.get(f"max_{name}")
        tokens = overrides.get(f"{name}_tokens")
        for label, value in ((f"max_{name}", items), (f"{name}_tokens", tokens)):
            if value is not None and value <= 0:
                raise InvalidBudget(f"{label} must be greater than 0")
        return TierBudget(int(items or default.max_items), int(tokens or default.max_tokens))

    floor = overrides.get("min_relevance")
    if floor is not None and not 0.0 <= floor <= 1.0:
        raise InvalidBudget("min_relevance must be between 0 and 1")
    return Budgets(
        memories=tier("memories", d.memories),
        episodes=tier("episodes", d.episodes),
        procedures=tier("procedures", d.procedures),
        profile=tier("profile", d.profile),
        min_relevance=d.min_relevance if floor is None else float(floor),
    )


def _enabled(tier: TierBudget) -> bool:
    return tier.max_items > 0 and tier.max_tokens > 0


def assemble(deps: AssembleNeeds, *, tenant: str, subject_id: str, query: str, budget: Budgets,
             hidden_special: tuple[str, ...] = (), team: TeamSource | None = None) -> Context:
    """``team``: where the approved team procedures come from (None: none). They are packed in a
    procedures budget of their own (the same numbers as the member's), so neither pushes the other out."""
    started = time.perf_counter()
    scope = scope_for(deps, tenant, subject_id)
    validate_query(deps, Query(text=query))
    now = deps.clock.now()
    prepared = pii.for_query(deps.pii, scope, query)
    qvec = deps.embedder.embed_query(query_text(prepared.pseudo_text, locale=deps.locale), tenant=scope.tenant)
    skipped: Skipped = []
    sparse = keyword_vector(deps, scope, prepared)  # one question, ranked twice: encoded once
    facts = rank(deps, scope, Query(query, k=budget.memories.max_items * 2, kinds=(Kind.FACT,),
                                    min_relevance=budget.min_relevance, hidden_special=hidden_special),
                 qvec, now, prepared=prepared, reveal=False, skipped=skipped, sparse=sparse)
    # Episodes and procedures are few per subject: a small candidate pool is enough for them.
    few = (budget.episodes.max_items + budget.procedures.max_items) * 2
    others = rank(deps, scope, Query(query, k=few, kinds=(Kind.EPISODE, Kind.PROCEDURE),
                                     min_relevance=budget.min_relevance, hidden_special=hidden_special),
                  qvec, now, candidates=few,
                 prepared=prepared, reveal=False, skipped=skipped, sparse=sparse)
    profile, profile_tokens, read_kinds = profile_tier(deps, scope, budget.profile, now=now,
                                                       hidden_special=hidden_special, skipped=skipped)
    if not facts and not others and not profile and not skipped:
        ensure_subject_exists(deps, scope)
    shown = {m.id for m in profile}
    kinds = {m.id: read_kinds[m.id] for m in profile}
    facts = [r for r in facts if r.memory.id not in shown]  # the profile tier holds them already

    def cost(r: Ranked) -> int:
        return estimate_tokens(r.memory.text) + 8  # the date and bullet around each line

    def opened(chunk: Sequence[Ranked]) -> list[Ranked]:  # only records the packing may take are decrypted
        return reveal_ranked(deps, scope, chunk, skipped)

    mem, mem_tokens = pack(facts, budget.memories, cost, open_chunk=opened)
    epi, epi_tokens = pack([r for r in others if r.memory.kind is Kind.EPISODE], budget.episodes, cost,
                           open_chunk=opened)
    pro, pro_tokens = pack([r for r in others if r.memory.kind is Kind.PROCEDURE], budget.procedures, cost,
                           open_chunk=opened)
    picks: list[TeamPick] = []
    team_tokens = 0
    if team is not None:
        found = relevant(team, deps.embedder, deps.scale, tenant=tenant, query=query, qvec=qvec,
                         floor=budget.min_relevance)
        picks, team_tokens = pack(found, budget.procedures, lambda t: estimate_tokens(t.procedure.text) + 8)
        picks = flag_conflicts(picks, [m.text for m in profile])
    prompt = render(facts=[r.memory for r in mem], episodes=[r.memory for r in epi],
                    procedures=[r.memory for r in pro], locale=deps.locale,
                    profile=[(m, kinds[m.id]) for m in profile] if _enabled(budget.profile) else None,
                    team=[(t.procedure.text, [c.constraint for c in t.conflicts]) for t in picks])
    chosen = mem + epi + pro
    deps.access.record(scope, [r.memory.id for r in chosen] + [m.id for m in profile], now)
    scores = [r.score for r in chosen]
    stats: dict[str, float | int] = {
        "count": len(chosen),
        "top_score": round(max(scores), 4) if scores else 0.0,
        "mean_score": round(sum(scores) / len(scores), 4) if scores else 0.0,
        "tokens": mem_tokens + epi_tokens + pro_tokens + team_tokens,
        "profile_count": len(profile),
        "profile_tokens": profile_tokens,
        "team_procedures": len(picks),
        "team_conflicts": sum(1 for t in picks if t.conflicts),
        "latency_ms": round((time.perf_counter() - started) * 1000, 3),
    }
    unreadable = deps.unreadable.add("assemble", skipped)
    stats["unreadable"] = len(unreadable)
    return Context(mem, epi, pro, prompt, stats, unreadable, profile, picks, kinds)
