"""Labelled files through reconcile, as it sees them: each subject's facts written one at a time through
``remember`` (pseudonymisation, embedding, candidates, dedup, the judge), with a judge wrapped so that
every pair it is asked about is recorded with its evidence and its label.

A labelled file (``../shared/bench/fr-train/*.json``, ``fr-dev*.json``) holds per subject ``facts`` (in
time order, each with its ``at``) and ``superseded`` (``{"old", "by"}`` fact indexes). ``late`` writes,
for a share of the labelled pairs, the older fact after all the others (a note typed late, a batch
replayed): reconcile must store it as already superseded.

``llm`` runs the cascade's second step (``services/memories/judge``, the code the service runs when an LLM
is configured) with ``LabelledLLM``: an LLM that is always right, answering by the labels. What it closes
is the bound the cascade can reach with the judge's band; how often it is called is the cost. With a real
model (``LlmStep.model``: the settings' Mistral, ``--llm mistral``), what that model reaches.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from carnet.domain.reconcile.decide import Incoming, PairJudge
from carnet.domain.records import Memory, Status
from carnet.errors import ExtractionFailed
from carnet.ports import ContradictionJudge
from carnet.services.memories.judge import judge_outcomes
from carnet.services.memories.remember import NewMemory, remember
from carnet.services.scope import scope_for


@dataclass(frozen=True, slots=True)
class Subject:
    tenant: str
    subject: str
    facts: tuple[tuple[str, datetime | None], ...]
    labels: frozenset[tuple[int, int]]  # (old, by)


@dataclass(frozen=True, slots=True)
class Labelled:
    name: str
    path: Path
    subjects: tuple[Subject, ...]

    @property
    def facts(self) -> int:
        return sum(len(s.facts) for s in self.subjects)


def load(path: Path) -> Labelled:
    spec = json.loads(path.read_text(encoding="utf-8"))
    subjects = []
    for tenant, tdata in sorted(spec["tenants"].items()):
        for sid, sdata in sorted(tdata["subjects"].items()):
            facts = tuple((f["text"], datetime.fromisoformat(f["at"]) if f.get("at") else None)
                          for f in sdata["facts"])
            labels = frozenset((int(p["old"]), int(p["by"])) for p in sdata.get("superseded", ()))
            subjects.append(Subject(tenant, sid, facts, labels))
    return Labelled(path.stem, path, tuple(subjects))


@dataclass(slots=True)
class Asked:
    """One pair the judge was asked about: fact indexes, evidence, label, the judge's answer."""

    older: int
    newer: int
    x: tuple[float, ...]
    label: bool
    p: float
    writing: int  # the fact being written when the question was asked


@dataclass(slots=True)
class SubjectRun:
    subject: Subject
    asked: list[Asked] = field(default_factory=list)
    closed: list[tuple[int, int]] = field(default_factory=list)  # (old, by) as reconcile closed them
    merged: list[tuple[int, int]] = field(default_factory=list)  # (fact, into)
    order: tuple[int, ...] = ()
    late: frozenset[int] = frozenset()  # facts written after the others
    writing: int = -1
    llm_calls: int = 0  # writes whose uncertain candidates went to the LLM
    llm_failed: int = 0  # of those, the calls a real model failed (the write stands, as in the service)
    contested: list[tuple[int, int]] = field(default_factory=list)  # (old, by): active, ranked after ``by``


class Recorder:
    """A ``PairJudge`` that answers with ``inner`` (or, as the oracle, with the labels) and records."""

    def __init__(self, inner: PairJudge | None, run: SubjectRun, index: dict[str, int]) -> None:
        self._inner, self._run, self._index = inner, run, index
        self.close_at = inner.close_at if inner else 0.5
        self.ask_from = inner.ask_from if inner else 0.5

    def judge(self, older: Memory | Incoming, newer: Memory | Incoming, x: tuple[float, ...]) -> float:
        o, n = self._index.get(older.text, -1), self._index.get(newer.text, -1)
        label = closes_by_label(self._run.subject.labels, o, n)
        p = self._inner.judge(older, newer, x) if self._inner else float(label)
        self._run.asked.append(Asked(o, n, x, label, p, self._run.writing))
        return p

    def contests(self, x: tuple[float, ...]) -> bool:
        return self._inner.contests(x) if self._inner else True


def closes_by_label(labels: frozenset[tuple[int, int]], old: int, new: int) -> bool:
    """``new`` makes ``old`` untrue: labelled so, or by a note at or before ``new`` (a later restatement)."""
    return any(o == old and b <= new for o, b in labels) and old < new


@dataclass(frozen=True, slots=True)
class LlmStep:
    """The cascade's LLM step in a run: the labels' stand-in (``LabelledLLM``, always right, or wrong at
    ``error``), or ``model``, a real one (the settings' Mistral), its calls counted the same way."""

    error: float = 0.0
    model: ContradictionJudge | None = None

    @property
    def name(self) -> str:
        return "labels" if self.model is None else "mistral"


class CountedLLM:
    """A real ``ContradictionJudge``, the writes that called it counted as ``LabelledLLM`` counts them."""

    def __init__(self, run: SubjectRun, model: ContradictionJudge) -> None:
        self._run, self._model, self._counted = run, model, -1

    def obsolete(self, new_fact: str, existing: Sequence[tuple[str, str]], *, locale: str) -> list[str]:
        if self._counted != self._run.writing:
            self._run.llm_calls += 1
            self._counted = self._run.writing
        return self._model.obsolete(new_fact, existing, locale=locale)


class LabelledLLM:
    """A ``ContradictionJudge`` that is always right: of the candidates it is shown, it names those the
    labels say the note being written makes untrue; shown the note being written as the candidate (a late
    note, asked whether a newer record retires it), it names it when the labels say so. It counts the
    writes that called it. ``error``: the share of its answers turned wrong (each candidate's answer
    flipped with that probability, the same each run), to see what a fallible LLM costs."""

    def __init__(self, run: SubjectRun, ids: dict[str, int], error: float = 0.0) -> None:
        self._run, self._ids, self._error = run, ids, error
        self.pseudo: dict[str, int] = {}  # pseudonymised text of each stored fact → its index
        self._counted = -1

    def obsolete(self, new_fact: str, existing: Sequence[tuple[str, str]], *, locale: str) -> list[str]:
        if self._counted != self._run.writing:
            self._run.llm_calls += 1
            self._counted = self._run.writing
        labels, writing = self._run.subject.labels, self._run.writing
        newer = self.pseudo.get(new_fact, -1)
        named = []
        for i, _ in existing:
            right = ((i in self._ids and closes_by_label(labels, self._ids[i], writing))
                     or (i not in self._ids and newer >= 0 and closes_by_label(labels, writing, newer)))
            other = self._ids.get(i, newer)
            if self._error and random.Random(f"{self._run.subject.subject}:{writing}:{other}").random() < self._error:
                right = not right
            if right:
                named.append(i)
        return named


def run_subject(deps: Any, subject: Subject, judge: PairJudge | None, *, prefix: str, late_share: float = 0.0,
                seed: int = 0, llm: LlmStep | None = None) -> SubjectRun:
    """Write the subject's facts through ``remember`` with ``judge`` (None: the labels) and record;
    ``llm``: then the cascade's LLM step, answered by ``LabelledLLM`` or by its real model."""
    order, late = _order(subject, late_share, seed)
    run = SubjectRun(subject, order=order, late=late)
    index = {text: k for k, (text, _) in reversed(list(enumerate(subject.facts)))}
    wired = replace(deps, supersession=Recorder(judge, run, index))
    ids: dict[str, int] = {}
    subject_id = f"{prefix}{subject.subject}"
    labelled = LabelledLLM(run, ids, llm.error if llm else 0.0)
    asker = CountedLLM(run, llm.model) if llm is not None and llm.model is not None else labelled
    for k in order:
        text, at = subject.facts[k]
        run.writing = k
        item = NewMemory(text=text, occurred_at=at)
        [out] = remember(wired, tenant=subject.tenant, subject_id=subject_id, items=[item], actor="bench")
        if llm is not None:
            try:
                [out] = judge_outcomes(wired, asker, scope_for(wired, subject.tenant, subject_id), [out], actor="bench")
            except ExtractionFailed:  # as ``remember_judged`` does: the write stands as reconcile left it
                run.llm_failed += 1
        ids.setdefault(out.memory.id, k)
        labelled.pseudo.setdefault(out.memory.pseudo_text, k)
        if out.action == "merged" and out.merged_into in ids:
            run.merged.append((k, ids[out.merged_into]))
        run.closed.extend((ids[i], k) for i in out.superseded if i in ids)
        if out.memory.status is Status.SUPERSEDED and out.memory.superseded_by in ids:
            run.closed.append((k, ids[out.memory.superseded_by]))
    stored = wired.index.get(scope_for(wired, subject.tenant, subject_id), list(ids))
    run.contested = [(ids[m.id], ids[c]) for m in stored if m.status is Status.ACTIVE
                     for c in m.contested_by if c in ids]
    return run


def _order(subject: Subject, late_share: float, seed: int) -> tuple[tuple[int, ...], frozenset[int]]:
    n = len(subject.facts)
    if late_share <= 0:
        return tuple(range(n)), frozenset()
    rng = random.Random(f"{seed}:{subject.tenant}:{subject.subject}")
    olds = sorted({o for o, _ in subject.labels})
    late = frozenset(o for o in olds if rng.random() < late_share)
    return tuple([k for k in range(n) if k not in late] + sorted(late)), late


def run_file(deps: Any, labelled: Labelled, judge: PairJudge | None, *, prefix: str, late_share: float = 0.0,
             llm: LlmStep | None = None) -> list[SubjectRun]:
    return [run_subject(deps, s, judge, prefix=prefix, late_share=late_share, llm=llm)
            for s in labelled.subjects]


def choices(runs: Sequence[SubjectRun]) -> list[tuple[tuple[tuple[float, ...], ...], tuple[bool, ...]]]:
    """The judge's questions grouped by the note that raised them: (evidence rows, labels)."""
    out: list[tuple[tuple[tuple[float, ...], ...], tuple[bool, ...]]] = []
    for run in runs:
        by_note: dict[int, list[Asked]] = {}
        for a in run.asked:
            by_note.setdefault(a.writing, []).append(a)
        out.extend((tuple(a.x for a in group), tuple(a.label for a in group)) for _, group in sorted(by_note.items()))
    return out
