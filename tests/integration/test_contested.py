"""A pair the judge is unsure of, through the real write and read paths (embedder, shard, reconcile,
recall): the older record stays active, marked ``contested_by`` the newer note, and a search that finds
both shows the newer first; an LLM that says the older stays true removes the mark; a late note is
marked by the newer record it may be replaced by.

The judge is a stand-in that puts every pair in its uncertain band (or below it, for the control), so the
tests are about what the band does, not about the learned weights (``carnet bench judge`` measures those)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from carnet.bootstrap.container import Container
from carnet.domain.reconcile.decide import Incoming
from carnet.domain.records import Memory, Status
from carnet.services.memories.judge import remember_judged
from carnet.services.memories.recall import Query, search
from carnet.services.memories.remember import NewMemory, remember
from carnet.services.scope import scope_for

JANUARY = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)
JUNE = JANUARY + timedelta(days=150)
LYON = "Le membre habite à Lyon, 12 rue Garibaldi."
GRENOBLE = "Le membre a déménagé à Grenoble."
QUESTION = "Le membre habite-t-il toujours à Lyon, rue Garibaldi ?"  # reads closer to the older note


class Constant:
    """Every pair gets ``p``: 0.7 is in the band [0.5, 0.9), 0.1 below it."""

    close_at, ask_from = 0.9, 0.5

    def contests(self, x: tuple[float, ...]) -> bool:  # every uncertain pair is contested until settled
        return True

    def __init__(self, p: float) -> None:
        self.p = p

    def judge(self, older: Memory | Incoming, newer: Memory | Incoming, x: tuple[float, ...]) -> float:
        return self.p


class Keeps:
    """An LLM that says no known fact is made untrue, and notes what it was asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, list[str]]] = []

    def obsolete(self, new_fact: str, existing: Sequence[tuple[str, str]], *, locale: str) -> list[str]:
        self.asked.append((new_fact, [i for i, _ in existing]))
        return []


def _write(container: Container, p: float, subject: str, *notes: tuple[str, datetime]) -> list[str]:
    deps = replace(container.deps, supersession=Constant(p))
    return [remember(deps, tenant="t", subject_id=subject, actor="test",
                     items=[NewMemory(text, occurred_at=at)])[0].memory.id for text, at in notes]


def _stored(container: Container, subject: str, *ids: str) -> list[Memory]:
    found = {m.id: m for m in container.deps.index.get(scope_for(container.deps, "t", subject), list(ids))}
    return [found[i] for i in ids]


def _answer(container: Container, subject: str) -> list[str]:
    found = search(container.deps, tenant="t", subject_id=subject, query=Query(QUESTION, k=2))
    return [r.memory.text for r in found]


def test_an_unsure_pair_keeps_the_older_active_and_shows_the_newer_first(container: Container) -> None:
    lyon, grenoble = _write(container, 0.7, "M-1", (LYON, JANUARY), (GRENOBLE, JUNE))
    old, new = _stored(container, "M-1", lyon, grenoble)
    assert (old.status, old.contested_by, new.contested_by) == (Status.ACTIVE, (grenoble,), ())
    assert _answer(container, "M-1") == [GRENOBLE, LYON]


def test_below_the_band_nothing_is_marked_and_the_closer_note_comes_first(container: Container) -> None:
    """The control: the question reads closer to the older note, so without the mark it ranks first."""
    lyon, _ = _write(container, 0.1, "M-2", (LYON, JANUARY), (GRENOBLE, JUNE))
    assert _stored(container, "M-2", lyon)[0].contested_by == ()
    assert _answer(container, "M-2") == [LYON, GRENOBLE]


def test_an_llm_that_keeps_the_older_true_removes_the_mark(container: Container) -> None:
    deps = replace(container.deps, supersession=Constant(0.7))
    [lyon] = _write(container, 0.7, "M-3", (LYON, JANUARY))
    llm = Keeps()
    [out] = remember_judged(deps, llm, tenant="t", subject_id="M-3", actor="test",
                            items=[NewMemory(GRENOBLE, occurred_at=JUNE)])
    assert llm.asked == [(out.memory.pseudo_text, [lyon])]
    assert _stored(container, "M-3", lyon)[0].contested_by == ()
    assert _answer(container, "M-3") == [LYON, GRENOBLE]


def test_a_late_note_is_marked_by_the_newer_record(container: Container) -> None:
    grenoble, lyon = _write(container, 0.7, "M-4", (GRENOBLE, JUNE), (LYON, JANUARY))
    late, newer = _stored(container, "M-4", lyon, grenoble)
    assert (late.status, late.contested_by, newer.contested_by) == (Status.ACTIVE, (grenoble,), ())
    assert _answer(container, "M-4") == [GRENOBLE, LYON]
