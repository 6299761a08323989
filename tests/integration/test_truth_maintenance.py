"""Truth maintenance through the real write path (embedder, shard, reconcile): a file's newer status
reaches its older one even when many other notes read closer to it, because the records naming the same
reference are always reconcile's candidates (``services/memories/neighbours.nearest``); and a note written
late is stored already closed by the newer record (time order, not arrival order).

The judge here is a stand-in that reads one feature of the evidence (so the tests are about candidates
and time order, not about the learned weights, which ``carnet bench judge`` measures)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from carnet.bootstrap.container import Container
from carnet.domain.reconcile.decide import Incoming
from carnet.domain.reconcile.evidence import FEATURES
from carnet.domain.records import Memory, Status
from carnet.ports import RecordFilter
from carnet.services.memories import neighbours
from carnet.services.memories import remember as remember_module
from carnet.services.memories.remember import NewMemory, remember
from carnet.services.scope import scope_for

T0 = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)
# Closed files of other members' kinds: each reads much like the new status of the first file.
OTHERS = [f"Dossier DGE-2024-{300 + n} clos : dommages évalués à {1000 + 90 * n} euros, indemnité versée."
          for n in range(12)]  # fmt: skip


class ByFeature:
    """Closes a pair when one feature of its evidence is set (1.0), never otherwise."""

    close_at, ask_from = 0.5, 0.5

    def contests(self, x: tuple[float, ...]) -> bool:  # every uncertain pair is contested until settled
        return True

    def __init__(self, feature: str) -> None:
        self.k = FEATURES.index(feature)

    def judge(self, older: Memory | Incoming, newer: Memory | Incoming, x: tuple[float, ...]) -> float:
        return x[self.k]


def _story(container: Container, subject: str) -> tuple[str, list[str]]:
    deps = replace(container.deps, supersession=ByFeature("shared_reference"))
    at = iter(T0 + timedelta(days=n) for n in range(100))
    pending = "Dossier DGE-2024-118 : en attente du rapport de l'expert, visite prévue mardi."
    first = remember(deps, tenant="t", subject_id=subject, actor="test",
                     items=[NewMemory(pending, occurred_at=next(at))])
    remember(deps, tenant="t", subject_id=subject, actor="test",
             items=[NewMemory(text, occurred_at=next(at)) for text in OTHERS])
    last = remember(deps, tenant="t", subject_id=subject, actor="test", items=[
        NewMemory("Dossier DGE-2024-118 clos : dommages évalués à 640 euros, indemnité versée.", occurred_at=next(at))])
    return first[0].memory.id, list(last[0].superseded)  # fmt: skip


def test_a_file_status_supersedes_the_files_older_status_among_many_closer_notes(container: Container) -> None:
    old, superseded = _story(container, "M-1")
    assert superseded == [old]
    scope = remember_module.scope_for(container.deps, "t", "M-1")
    (stored,) = container.deps.index.get(scope, [old])
    assert stored.status is Status.SUPERSEDED
    others = container.deps.index.scroll(scope, where=RecordFilter(statuses=(Status.SUPERSEDED,)),
                                         limit=50)
    assert [m.id for m in others[0]] == [old]  # no other member file was closed by it


def test_without_the_linked_candidates_the_old_status_is_out_of_reach(
    container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scenario above really needs the reference: by wording alone the old status is not among the
    nearest candidates (so the first test would fail without them)."""
    monkeypatch.setattr(neighbours, "LINKED_TOKENS", 0)
    _, superseded = _story(container, "M-2")
    assert superseded == []


def test_a_note_written_late_is_stored_closed_by_the_newer_record(container: Container) -> None:
    """"a déménagé à Grenoble" (June) then "habite à Lyon" (January): Lyon is stored superseded, valid until
    June, and only Grenoble is current; the judge is asked with the late note as the older of the pair."""
    asked: list[tuple[str, str]] = []

    class Recording(ByFeature):
        def judge(self, older: Memory | Incoming, newer: Memory | Incoming, x: tuple[float, ...]) -> float:
            asked.append((older.text, newer.text))
            return 1.0

    deps = replace(container.deps, supersession=Recording("cosine"))
    june, january = T0 + timedelta(days=150), T0
    [moved] = remember(deps, tenant="t", subject_id="M-3", actor="test",
                       items=[NewMemory("Le membre a déménagé à Grenoble.", occurred_at=june)])
    [late] = remember(deps, tenant="t", subject_id="M-3", actor="test",
                      items=[NewMemory("Le membre habite à Lyon.", occurred_at=january)])
    assert asked == [("Le membre habite à Lyon.", "Le membre a déménagé à Grenoble.")]
    assert (late.action, late.superseded) == ("created", ())
    scope = scope_for(container.deps, "t", "M-3")
    stored = {m.id: m for m in container.deps.index.get(scope, [moved.memory.id, late.memory.id])}
    old, new = stored[late.memory.id], stored[moved.memory.id]
    assert (old.status, old.superseded_by, old.valid_to) == (Status.SUPERSEDED, new.id, june)
    assert new.status is Status.ACTIVE
    history = container.deps.catalog.history(scope, late.memory.id)
    assert [h.action for h in history] == ["created", "superseded"] and history[-1].detail["by"] == new.id
