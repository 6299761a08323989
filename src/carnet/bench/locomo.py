"""``carnet bench locomo``: recall@k of LoCoMo questions over one memory per dialog turn.

Each conversation of a LoCoMo file (Maharana et al., 2024; format in ``docs/benchmarks.md``) becomes
one subject; each dialog turn is remembered through the real write path (embedding, reconcile,
store) with the settings a deployment would use, one session per ``remember`` call. Then every
question of categories 1-4 is asked through the real read path (``recall.search``), and a question
is a hit at k when one of its evidence turns is among the sources of the top-k records (a merged
record carries several sources: any of them counts).

The loader (``load``, ``parse_session_date``, ``normalize_evidence``) is pure and unit-tested.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

TENANT = "bench-locomo"
ACTOR = "bench"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
# How many preceding turns of the same session are embedded with a turn (as context, never as
# provenance): a reply such as "Yes, twice!" only makes sense with the question it answers.
CONTEXT_TURNS = 2
CONTEXT_CHARS = 400  # keep the context from drowning the turn itself in the embedding
# A dialog turn is an utterance: "Caroline said X on 8 May" never stops being true, so it is remembered as
# an event (``episode``), which reconcile may merge but never supersede. As ``fact`` records, chit-chat
# turns trip the contradiction band ("What now?" reads as a change marker) and most of a conversation
# ends up superseded and hidden from recall (see docs/benchmarks.md).
TURN_KIND = "episode"

_MONTHS = {
    name: n
    for n, names in enumerate(
        (("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
         ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
         ("october", "oct"), ("november", "nov"), ("december", "dec")),
        start=1,
    )
    for name in names
}
_SESSION_DATE = re.compile(
    r"^\s*(?P<h>\d{1,2}):(?P<m>\d{2})\s*(?P<ampm>[ap])\.?m\.?\s+on\s+"
    r"(?P<day>\d{1,2})\s+(?P<month>[a-z]+)\.?,?\s+(?P<year>\d{4})\s*$",
    re.IGNORECASE,
)
_SESSION_KEY = re.compile(r"^session_(\d+)$")
_EVIDENCE_ID = re.compile(r"^D:?(\d+):(\d+)$", re.IGNORECASE)
_EVIDENCE_SPLIT = re.compile(r"[;,\s]+")


# --- loader (pure) ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    caption: str | None = None

    def memory_text(self) -> str:
        """What is remembered: the speaker's name, the words, and the shared image's caption."""
        text = f"{self.speaker}: {self.text.strip()}"
        if self.caption:
            text += f" [shares {self.caption.strip()}]"
        return text


@dataclass(frozen=True, slots=True)
class Session:
    number: int
    at: datetime
    turns: tuple[Turn, ...]


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    category: int
    evidence: tuple[str, ...]  # normalised dia_ids that exist in the conversation (may be empty)


@dataclass(frozen=True, slots=True)
class Conversation:
    sample_id: str
    speakers: tuple[str, ...]
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]

    def dia_ids(self) -> frozenset[str]:
        return frozenset(t.dia_id for s in self.sessions for t in s.turns)

    def session_id(self, session: Session) -> str:
        return f"{self.sample_id}/session_{session.number}"


def parse_session_date(value: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` -> 2023-05-08 13:56 UTC (LoCoMo's session timestamps carry no zone)."""
    m = _SESSION_DATE.match(value)
    if m is None:
        raise ValueError(f"unrecognised session date: {value!r}")
    month = _MONTHS.get(m["month"].lower())
    if month is None:
        raise ValueError(f"unrecognised month in session date: {value!r}")
    hour = int(m["h"])
    if not 1 <= hour <= 12:
        raise ValueError(f"hour out of range in session date: {value!r}")
    hour = hour % 12 + (12 if m["ampm"].lower() == "p" else 0)
    return datetime(int(m["year"]), month, int(m["day"]), hour, int(m["m"]), tzinfo=UTC)


def normalize_evidence(raw: Iterable[object], valid: AbstractSet[str]) -> tuple[str, ...]:
    """Evidence dia_ids, cleaned: ``"D8:6; D9:17"`` is two ids, ``"D:11:26"`` is ``D11:26``, ``"D30:05"`` is
    ``D30:5``; ids that are not turns of the conversation are dropped; order kept, duplicates removed."""
    out: list[str] = []
    for item in raw:
        for token in _EVIDENCE_SPLIT.split(str(item)):
            m = _EVIDENCE_ID.match(token.strip())
            if m is None:
                continue
            dia_id = f"D{int(m[1])}:{int(m[2])}"
            if dia_id in valid and dia_id not in out:
                out.append(dia_id)
    return tuple(out)


def parse_conversation(raw: dict[str, Any]) -> Conversation:
    conv = raw["conversation"]
    sessions: list[Session] = []
    for key, turns in conv.items():
        m = _SESSION_KEY.match(key)
        if m is None or not isinstance(turns, list) or not turns:
            continue
        number = int(m[1])
        stamp = conv.get(f"session_{number}_date_time")
        if not stamp:
            raise ValueError(f"{raw.get('sample_id')}: session {number} has no date")
        sessions.append(Session(
            number=number,
            at=parse_session_date(stamp),
            turns=tuple(
                Turn(dia_id=t["dia_id"], speaker=t["speaker"], text=t.get("text") or "",
                     caption=t.get("blip_caption") or None)
                for t in turns
            ),
        ))
    sessions.sort(key=lambda s: s.number)
    valid = frozenset(t.dia_id for s in sessions for t in s.turns)
    questions = tuple(
        Question(text=str(q["question"]), category=int(q["category"]),
                 evidence=normalize_evidence(q.get("evidence") or (), valid))
        for q in raw.get("qa", ())
        if "question" in q
    )
    speakers = tuple(conv[k] for k in ("speaker_a", "speaker_b") if conv.get(k))
    return Conversation(str(raw["sample_id"]), speakers, tuple(sessions), questions)


def load(path: Path) -> list[Conversation]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, dict):  # a single conversation
        data = [data]
    return [parse_conversation(c) for c in data]


class UnknownConversation(ValueError):
    """``--conversations`` names a sample id the file does not have."""


def select(conversations: Sequence[Conversation], wanted: Sequence[str] | None) -> list[Conversation]:
    """The conversations named in ``wanted`` (their ``sample_id``), in the file's order; all when
    ``wanted`` is None. A name the file does not have is an error, not an empty run."""
    if wanted is None:
        return list(conversations)
    known = {c.sample_id for c in conversations}
    missing = [w for w in wanted if w not in known]
    if missing:
        raise UnknownConversation(f"no conversation {', '.join(missing)} in the file "
                                  f"(it has {', '.join(sorted(known))})")
    return [c for c in conversations if c.sample_id in set(wanted)]


def turn_context(turns: Sequence[Turn], i: int, n: int = CONTEXT_TURNS,
                 max_chars: int = CONTEXT_CHARS) -> str | None:
    """The ``n`` turns before turn ``i`` of the same session, oldest first, trimmed from the left."""
    if n <= 0 or i == 0:
        return None
    text = " ".join(t.memory_text() for t in turns[max(0, i - n):i])
    return text[-max_chars:] if len(text) > max_chars else text


# --- the benchmark ------------------------------------------------------------------------------


@dataclass(slots=True)
class _Tally:
    hits: Counter[int]
    asked: int = 0

    def recall(self, ks: Sequence[int]) -> dict[str, float]:
        return {f"recall@{k}": round(self.hits[k] / self.asked, 4) if self.asked else 0.0 for k in ks}


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
            container.deps.embedder.reset_stats()
            result = _ask(container.deps, chosen, ks, err)
            result["cache_hit_rate"] = round(container.deps.embedder.hit_rate(), 4)
        finally:
            container.close()
    summary: dict[str, Any] = {f"recall@{k}": result["overall"][f"recall@{k}"] for k in ks}
    summary.update(
        pii=settings.pii.enabled,
        by_category=result["by_category"],
        by_conversation=result["by_conversation"],
        p50_ms=result["p50_ms"],
        p95_ms=result["p95_ms"],
        p99_ms=result["p99_ms"],
        questions=result["questions"],
        skipped_no_evidence=result["skipped"],
        conversations=len(chosen),
        turns=ingest["turns"],
        created=ingest["created"],
        merged=ingest["merged"],
        superseded=ingest["superseded"],
        unchanged=ingest["unchanged"],
        ingest_s=ingest["seconds"],
        query_cache_hit_rate=result["cache_hit_rate"],
        embedder=container.deps.embedder.model_id,
        machine=machine(),
        load_avg_1m=round(os.getloadavg()[0], 2),  # latency is only comparable on an idle machine
        context_turns=CONTEXT_TURNS,
        turn_kind=TURN_KIND,
    )
    _print_report(out, summary, ks)
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


def _ask(deps: Any, conversations: Sequence[Conversation], ks: Sequence[int], err: Any) -> dict[str, Any]:
    from carnet.bench.report import percentiles
    from carnet.services.memories.recall import Query, search

    overall = _Tally(Counter())
    by_cat: dict[int, _Tally] = defaultdict(lambda: _Tally(Counter()))
    by_conv: dict[str, _Tally] = defaultdict(lambda: _Tally(Counter()))
    latencies: list[float] = []
    skipped = 0
    for conv in conversations:
        for q in conv.questions:
            if q.category not in CATEGORIES:
                continue
            if not q.evidence:
                skipped += 1
                continue
            t0 = time.perf_counter()
            query = Query(text=q.text, k=ks[-1])
            ranked = search(deps, tenant=TENANT, subject_id=conv.sample_id, query=query)
            latencies.append((time.perf_counter() - t0) * 1000)
            first = _first_hit(ranked, frozenset(q.evidence))
            for tally in (overall, by_cat[q.category], by_conv[conv.sample_id]):
                tally.asked += 1
                for k in ks:
                    if first is not None and first < k:
                        tally.hits[k] += 1
        err.print(f"asked {conv.sample_id}: {overall.asked} questions so far")
    return {
        "overall": overall.recall(ks),
        "by_category": {str(c): by_cat[c].recall(ks) for c in sorted(by_cat)},
        "by_conversation": {c: t.recall(ks) for c, t in by_conv.items()},
        "questions": overall.asked,
        "skipped": skipped,
        **percentiles(latencies),
    }


def _first_hit(ranked: Sequence[Any], evidence: frozenset[str]) -> int | None:
    """Rank (0-based) of the first record one of whose sources is an evidence turn."""
    for rank, r in enumerate(ranked):
        if any(s.ref in evidence for s in r.memory.sources):
            return rank
    return None


def _print_report(out: Any, summary: dict[str, Any], ks: Sequence[int]) -> None:
    from rich.table import Table

    out.print(
        f"ingested {summary['turns']} turns of {summary['conversations']} conversations in "
        f"{summary['ingest_s']} s: created {summary['created']}, merged {summary['merged']}, "
        f"superseded {summary['superseded']}, unchanged {summary['unchanged']}"
    )
    out.print(f"questions {summary['questions']} (categories 1-4), "
              f"skipped {summary['skipped_no_evidence']} without valid evidence")
    table = Table(title="LoCoMo recall@k")
    table.add_column("category")
    for k in ks:
        table.add_column(f"@{k}", justify="right")
    table.add_row("all", *(f"{summary[f'recall@{k}']:.3f}" for k in ks))
    for cat, rec in summary["by_category"].items():
        table.add_row(f"{cat} {CATEGORIES[int(cat)]}", *(f"{rec[f'recall@{k}']:.3f}" for k in ks))
    for conv, rec in summary["by_conversation"].items():
        table.add_row(conv, *(f"{rec[f'recall@{k}']:.3f}" for k in ks))
    out.print(table)
    out.print(f"search latency p50 {summary['p50_ms']} ms, p95 {summary['p95_ms']} ms, "
              f"p99 {summary['p99_ms']} ms; query cache hit rate {summary['query_cache_hit_rate']}")
