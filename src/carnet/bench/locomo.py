"""``carnet bench locomo``: recall@k of LoCoMo questions over one memory per dialog turn.

Each conversation of a LoCoMo file (Maharana et al., 2024; format in ``docs/benchmarks.md``) becomes
one subject; each dialog turn is remembered through the real write path (embedding, reconcile,
store) with the settings a deployment would use, one session per ``remember`` call. Then every
question of categories 1-4 is asked through the real read path (``recall.search``), and a question
is a hit at k when one of its evidence turns is among the sources of the top-k records (a merged
record carries several sources: any of them counts).

The loader is ``locomo_data``, the questions are asked by ``locomo_ask`` and reported by ``locomo_report``.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from carnet.bench.locomo_ask import ask
from carnet.bench.locomo_data import CONTEXT_TURNS, Conversation, Session, load, select, turn_context
from carnet.bench.locomo_report import print_report

TENANT = "bench-locomo"
ACTOR = "bench"
# A dialog turn is an utterance: "Caroline said X on 8 May" never stops being true, so it is remembered as
# an event (``episode``), which reconcile may merge but never supersede. As ``fact`` records, chit-chat
# turns trip the contradiction band ("What now?" reads as a change marker) and most of a conversation
# ends up superseded and hidden from recall (see docs/benchmarks.md).
TURN_KIND = "episode"


@contextmanager
def _store_dir(store: Path | None) -> Iterator[Path]:
    if store is not None:
        store.mkdir(parents=True, exist_ok=True)
        yield store
        return
    with tempfile.TemporaryDirectory(prefix="carnet-locomo-") as tmp:
        yield Path(tmp)


def run(*, data: Path, ks: list[int], json_out: bool, store: Path | None, pii: bool = True,
        conversations: Sequence[str] | None = None) -> None:
    """``conversations``: the sample ids to run (all by default); the summary gives recall per
    conversation too (``by_conversation``), so tuned and untuned conversations can be told apart."""
    from rich.console import Console

    from carnet.bench.report import emit_json, machine
    from carnet.bootstrap.wiring import build
    from carnet.logs import configure
    from carnet.settings.root import Settings

    configure("WARNING")  # logs go to stderr; stdout carries the results
    out = Console(highlight=False)
    err = Console(stderr=True, highlight=False)
    chosen = select(load(data), conversations)
    ks = sorted(set(ks))
    with _store_dir(store) as root:
        # Deployment settings (CARNET_* environment variables apply), English locale for English data.
        values: dict[str, Any] = {"data_dir": root / "data", "key_dir": root / "keys", "locale": "en"}
        settings = Settings(**values)
        if not pii:  # the comparison arm: texts embedded as they are
            settings = settings.model_copy(update={"pii": settings.pii.model_copy(update={"enabled": False})})
        if settings.api.max_k < ks[-1]:
            settings = settings.model_copy(update={"api": settings.api.model_copy(update={"max_k": ks[-1]})})
        container = build(settings)
        try:
            ingest = _ingest(container.deps, chosen, err)
            cache = container.deps.embedder  # its counters are /metrics': read as deltas over the questions
            hits, misses = cache.hits, cache.misses
            result = ask(container.deps, TENANT, chosen, ks, err)
            asked = (cache.hits - hits) + (cache.misses - misses)
            result["cache_hit_rate"] = round((cache.hits - hits) / asked, 4) if asked else 0.0
        finally:
            container.close()
    summary: dict[str, Any] = {f"recall@{k}": result["overall"][f"recall@{k}"] for k in ks}
    summary["pii"] = settings.pii.enabled
    summary.update({k: result[k] for k in ("by_category", "by_conversation", "p50_ms", "p95_ms", "p99_ms",
                                           "questions")})
    summary.update({k: ingest[k] for k in ("turns", "created", "merged", "superseded", "unchanged")})
    summary.update(
        skipped_no_evidence=result["skipped"],
        conversations=len(chosen),
        ingest_s=ingest["seconds"],
        query_cache_hit_rate=result["cache_hit_rate"],
        embedder=container.deps.embedder.model_id,
        machine=machine(),
        load_avg_1m=round(os.getloadavg()[0], 2),  # latency is only comparable on an idle machine
        context_turns=CONTEXT_TURNS,
        turn_kind=TURN_KIND,
    )
    print_report(out, summary, ks)
    if json_out:
        emit_json(summary)


def _memories(conv: Conversation, session: Session) -> list[Any]:
    from carnet.domain.records import Kind, Source
    from carnet.services.memories.remember import NewMemory

    sid = conv.session_id(session)
    return [
        NewMemory(
            text=turn.memory_text(),
            kind=Kind(TURN_KIND),
            occurred_at=session.at,
            idempotency_key=f"{conv.sample_id}:{turn.dia_id}",
            sources=(Source("turn", turn.dia_id, sid),),
            context=turn_context(session.turns, i, CONTEXT_TURNS),
            session_id=sid,
        )
        for i, turn in enumerate(session.turns)
    ]


def _ingest(deps: Any, conversations: Sequence[Conversation], err: Any) -> dict[str, Any]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from carnet.services.memories.remember import remember

    actions: Counter[str] = Counter()
    total = sum(len(s.turns) for c in conversations for s in c.sessions)
    started = time.perf_counter()
    lines = not err.is_terminal  # no live bar in a log file: periodic lines instead
    done = 0
    with Progress(TextColumn("ingest {task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err, transient=False, disable=lines) as progress:
        task = progress.add_task("", total=total)
        for conv in conversations:
            progress.update(task, description=conv.sample_id)
            for session in conv.sessions:
                outcomes = remember(deps, tenant=TENANT, subject_id=conv.sample_id,
                                    items=_memories(conv, session), actor=ACTOR)
                actions.update(o.action for o in outcomes)
                progress.advance(task, len(session.turns))
                if lines and (done + len(session.turns)) // 100 > done // 100:
                    err.print(f"ingest {conv.sample_id}: {done + len(session.turns)}/{total} turns, "
                              f"{time.perf_counter() - started:.0f} s")
                done += len(session.turns)
    return {
        "turns": total,
        "created": actions["created"],
        "merged": actions["merged"],
        "superseded": actions["superseded"],
        "unchanged": actions["unchanged"],
        "seconds": round(time.perf_counter() - started, 2),
    }
