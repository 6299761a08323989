"""``carnet bench extract``: the scenarios, told as raw messages to the rule-based extractor.

``carnet bench scenarios`` stores each story's facts as they are written; this command feeds the
same story to ``RuleExtractor`` as conversation turns and stores only what it extracts, so the two
recall figures compare "facts stored directly" with "facts extracted from raw messages".

For each subject, turns are its ``calls`` (fr-dev-2: each call is one session, its ``session_id``, roles
``user`` and ``advisor``), else its ``messages`` (``role``, ``content``, ``at``, optional ``session``),
else, in the scenario format, its ``facts`` told by the member (role ``user``). Consecutive turns of the
same call, day (or ``session``) are one session, handled as the intake worker (``services.worker``)
handles an intake: the turns are pseudonymised with the subject's map (the extractor only ever sees
placeholders), extracted in one call, the values are put back into the facts, and each fact (then the
episode, importance 0.4 as the worker stores it) is remembered through the real write path. One
difference: each fact's source is the turn it came from (the worker names the intake), so that the
``not_old`` and ``superseded`` checks can find the records a given turn made. With ``calls``, those
checks name facts, not turns: a fact's records are the records of its call that state it
(``extract_calls``).

Then the scenario's checks run through the real read path, judged by the same rules as ``bench
scenarios`` (``judge``, ``count_leaks``): a query's top-3 must contain one of ``expect_any`` and none
of the records made from the ``not_old`` turn; each ``superseded`` pair's old turn must have left a
superseded record; cross-tenant probes must find nothing of another tenant.

Extraction cost is timed around the extractor alone (per message), not the write path: each
session's first extraction, and the same extraction again once word caches are warm.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.console import Console

from carnet.bench.extract_calls import fact_records
from carnet.bench.report import emit_json, machine, progress
from carnet.bench.scenarios import Tally, count_leaks, judge
from carnet.domain.extraction.model import Extraction
from carnet.domain.intake import Message
from carnet.ports import Extractor

ACTOR = "bench-extract"
SOURCES = ("calls", "facts")


@dataclass
class Stats:
    messages: int = 0
    sessions: int = 0
    facts: int = 0
    episodes: int = 0
    silent: int = 0  # messages that gave no fact
    extract_seconds: float = 0.0  # each session's first extraction
    warm_seconds: float = 0.0  # the same extraction again (word caches warm, as in a long-running worker)
    actions: dict[str, int] = field(default_factory=dict)
    shown: list[str] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)  # record id → the text extracted for it (in clear)
    by_kind: dict[str, list[int]] = field(default_factory=dict)  # query kind → [hits, queries]


@dataclass(frozen=True, slots=True)
class Turn:
    index: int
    message: Message
    session: str
    call: int | None = None  # index in the subject's ``calls``, when it has them


def turns(sdata: dict[str, Any], source: str = "calls") -> list[Turn]:
    """The subject's turns, in order, each with its session key (the call's id, explicit, or the day)."""
    if source == "calls" and "calls" in sdata:
        return _call_turns(sdata["calls"])
    raw = sdata.get("messages")
    if raw is None:
        raw = [{"role": "user", "content": f["text"], "at": f.get("at")} for f in sdata["facts"]]
    out = []
    for i, item in enumerate(raw):
        at = datetime.fromisoformat(item["at"].replace("Z", "+00:00")) if item.get("at") else None
        session = item.get("session") or (at.date().isoformat() if at else "0")
        out.append(Turn(i, Message(role=item["role"], content=item["content"], at=at), str(session)))
    return out


def _call_turns(calls: list[dict[str, Any]]) -> list[Turn]:
    out: list[Turn] = []
    for n, call in enumerate(calls):
        for item in call["messages"]:
            at = datetime.fromisoformat(item["at"].replace("Z", "+00:00")) if item.get("at") else None
            out.append(Turn(len(out), Message(role=item["role"], content=item["content"], at=at),
                            str(call["session_id"]), n))
    return out


def sessions(all_turns: list[Turn]) -> Iterator[list[Turn]]:
    """Runs of consecutive turns with the same session key."""
    run: list[Turn] = []
    for turn in all_turns:
        if run and turn.session != run[-1].session:
            yield run
            run = []
        run.append(turn)
    if run:
        yield run


def attribute(extractor: Extractor, messages: list[Message], *, session_id: str,
              locale: str) -> list[list[tuple[int, Any]]]:
    """For each message, the facts it gave: those of the first ``i + 1`` messages that the first ``i``
    did not give (the extraction reads a call in order, so a prefix's facts are a prefix)."""
    per_message: list[list[tuple[int, Any]]] = []
    before = 0
    for i in range(len(messages)):
        facts = extractor.extract(messages[: i + 1], session_id=None, locale=locale).facts
        per_message.append([(i, f) for f in facts[before:]])
        before = len(facts)
    return per_message


def run(*, data: Path, json_out: bool, show: bool = False, source: str = "calls") -> None:
    from carnet.adapters.extractors.rules import RuleExtractor
    from carnet.bootstrap.wiring import build
    from carnet.settings.root import Settings

    spec = json.loads(data.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="carnet-bench-extract-") as tmp:
        container = build(Settings(data_dir=Path(tmp) / "data", locale="fr"))
        try:
            tally, stats = evaluate(container.deps, spec, RuleExtractor(), locale="fr", source=source)
        finally:
            container.close()
    _print(tally, stats, json_out, show, source)


def evaluate(deps: Any, spec: dict[str, Any], extractor: Extractor, *, locale: str,
             source: str = "calls") -> tuple[Tally, Stats]:
    tally, stats = Tally(), Stats()
    owned: dict[str, set[str]] = {}
    for tenant, tdata in spec["tenants"].items():
        owned[tenant] = set()
        for subject, sdata in tdata["subjects"].items():
            if source != "calls":
                sdata = {k: v for k, v in sdata.items() if k != "calls"}
            all_turns = turns(sdata, source)
            progress(f"extracting {len(all_turns)} turns for {tenant}/{subject}")
            made: list[set[str]] = [set() for _ in all_turns]
            for session in sessions(all_turns):
                _tell(deps, extractor, tenant, subject, session, made, stats, locale)
            owned[tenant].update(*made)
            _check(deps, tally, tenant, subject, sdata, _checked(sdata, all_turns, made, stats.texts), stats)
    for probe in spec.get("cross_tenant_probes", []):
        results = _search(deps, probe["tenant"], probe["subject"], probe["q"], k=10)
        tally.leaks += count_leaks(probe, results, owned)
    return tally, stats


def _checked(sdata: dict[str, Any], all_turns: list[Turn], made: list[set[str]],
             texts: dict[str, str]) -> list[set[str]]:
    """What the checks' indexes name: turns, or with ``calls`` the scenario's facts."""
    if "calls" not in sdata:
        return made
    by_call: list[set[str]] = [set() for _ in sdata["calls"]]
    for turn in all_turns:
        by_call[turn.call or 0].update(made[turn.index])
    return fact_records(sdata, by_call, texts)


def _tell(deps: Any, extractor: Extractor, tenant: str, subject: str, session: list[Turn], made: list[set[str]],
          stats: Stats, locale: str) -> None:
    from carnet.domain.records import Kind, Source
    from carnet.services import pii
    from carnet.services.memories.remember import NewMemory, remember
    from carnet.services.scope import scope_for

    sid = f"{subject}/{session[0].session}"
    scope = scope_for(deps, tenant, subject)
    seen = pii.for_extraction(deps.pii, scope, [t.message.content for t in session])
    back = seen.back
    with deps.locks.for_scope(scope):  # as the intake worker does, before the facts are remembered
        pii.grow(deps.pii, scope, seen.found)
    messages = [Message(t.message.role, text, t.message.at) for t, text in zip(session, seen.pseudo, strict=True)]
    started = time.perf_counter()
    extraction: Extraction = extractor.extract(messages, session_id=sid, locale=locale)
    stats.extract_seconds += time.perf_counter() - started
    started = time.perf_counter()
    extractor.extract(messages, session_id=sid, locale=locale)
    stats.warm_seconds += time.perf_counter() - started
    stats.messages += len(messages)
    stats.sessions += 1
    per_message = attribute(extractor, messages, session_id=sid, locale=locale)
    last_at = max((m.at for m in messages if m.at), default=None)
    items, origin = [], []
    for turn, facts in zip(session, per_message, strict=True):
        stats.silent += not facts
        for j, (_, fact) in enumerate(facts):
            stats.shown.append(f"{subject} #{turn.index} [{fact.category} {fact.importance}] {fact.text}")
            items.append(NewMemory(text=pii.restore(fact.text, back), kind=fact.kind,
                                   occurred_at=fact.valid_from or last_at,
                                   importance=fact.importance, category=fact.category,
                                   idempotency_key=f"{sid}:{turn.index}:{j}",
                                   sources=(Source("turn", str(turn.index), sid),), session_id=sid))
            origin.append(turn.index)
    stats.facts += len(items)
    if extraction.episode:
        stats.shown.append(f"{subject} episode: {extraction.episode}")
        items.append(NewMemory(text=pii.restore(extraction.episode, back), kind=Kind.EPISODE, occurred_at=last_at,
                               importance=0.4, category="episode", idempotency_key=f"{sid}:episode",
                               sources=(Source("session", sid, sid),), session_id=sid))
        stats.episodes += 1
    if not items:
        return
    for n, outcome in enumerate(remember(deps, tenant=tenant, subject_id=subject, items=items, actor=ACTOR)):
        stats.actions[outcome.action] = stats.actions.get(outcome.action, 0) + 1
        if n < len(origin):
            mid = outcome.merged_into or outcome.memory.id
            made[origin[n]].add(mid)
            stats.texts.setdefault(mid, items[n].text)


def _search(deps: Any, tenant: str, subject: str, q: str, k: int = 3) -> list[tuple[str, str]]:
    from carnet.errors import SubjectNotFound
    from carnet.services.memories.recall import Query, search

    try:
        ranked = search(deps, tenant=tenant, subject_id=subject, query=Query(text=q, k=k))
    except SubjectNotFound:
        return []
    return [(r.memory.id, r.memory.text) for r in ranked]


def _check(deps: Any, tally: Tally, tenant: str, subject: str, sdata: dict[str, Any],
           made: list[set[str]], stats: Stats) -> None:
    from carnet.domain.records import Status
    from carnet.services.scope import scope_for

    for query in sdata.get("queries", []):
        tally.queries += 1
        old = query.get("not_old")
        results = _search(deps, tenant, subject, query["q"])
        found, stale = judge(query, results, old_ids=made[old] if old is not None else set())
        kind = stats.by_kind.setdefault(query.get("kind", "-"), [0, 0])
        kind[1] += 1
        if found and not stale:
            tally.hits += 1
            kind[0] += 1
        else:
            top = " | ".join(text[:60] for _, text in results)
            tally.misses.append(f"{subject}: {query['q']} (found={found}, stale={stale}; top-3: {top})")
    scope = scope_for(deps, tenant, subject)
    for pair in sdata.get("superseded", []):
        tally.superseded_total += 1
        statuses = {m.status for m in deps.index.get(scope, sorted(made[pair["old"]]))}
        if Status.SUPERSEDED in statuses:
            tally.superseded_hidden += 1
        else:
            tally.misses.append(f"{subject}: {pair['old']} not superseded by {pair['by']} "
                                f"({len(made[pair['old']])} record(s))")


def _print(tally: Tally, stats: Stats, json_out: bool, show: bool, source: str = "calls") -> None:
    console = Console(highlight=False)
    if show:
        for line in stats.shown:
            console.print(line, markup=False)
    recall = tally.hits / tally.queries if tally.queries else 0.0
    hidden = tally.superseded_hidden / tally.superseded_total if tally.superseded_total else 1.0
    per_message = stats.facts / stats.messages if stats.messages else 0.0
    ms = 1000 * stats.extract_seconds / stats.messages if stats.messages else 0.0
    warm = 1000 * stats.warm_seconds / stats.messages if stats.messages else 0.0
    console.print(f"messages {stats.messages} in {stats.sessions} sessions: {stats.facts} facts "
                  f"({per_message:.2f} per message, {stats.silent} messages gave none), {stats.episodes} episodes; "
                  f"write path: {stats.actions}")
    console.print(f"extraction         {ms:.3f} ms per message (first pass), {warm:.3f} ms warm")
    console.print(f"recall@3           {recall:.3f}  ({tally.hits}/{tally.queries})")
    kinds = ", ".join(f"{k} {h}/{n}" for k, (h, n) in sorted(stats.by_kind.items()))
    console.print(f"by kind            {kinds}")
    console.print(f"superseded hidden  {hidden:.3f}  ({tally.superseded_hidden}/{tally.superseded_total})")
    console.print(f"cross-tenant leaks {tally.leaks}")
    for miss in tally.misses:
        console.print(f"  miss: {miss}", markup=False)
    if json_out:
        emit_json({
            "recall_at_3": round(recall, 4),
            "superseded_hidden": round(hidden, 4),
            "superseded_total": tally.superseded_total,
            "leaks": tally.leaks,
            "queries": tally.queries,
            "messages": stats.messages,
            "sessions": stats.sessions,
            "facts": stats.facts,
            "facts_per_message": round(per_message, 3),
            "episodes": stats.episodes,
            "ms_per_message": round(ms, 4),
            "ms_per_message_warm": round(warm, 4),
            "actions": stats.actions,
            "extractor": "rules",
            "from": source,
            "by_kind": {k: round(h / n, 4) for k, (h, n) in sorted(stats.by_kind.items())},
            "machine": machine(),
        })
