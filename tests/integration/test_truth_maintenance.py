"""Truth maintenance through the real write path (embedder, shard, reconcile): a file's newer status
supersedes its older one even when many other notes read closer to it, because the records naming the
same reference are always reconcile's candidates (``services/memories/neighbours.nearest``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from carnet.bootstrap.container import Container
from carnet.domain.records import Status
from carnet.ports import RecordFilter
from carnet.services.memories import neighbours
from carnet.services.memories import remember as remember_module
from carnet.services.memories.remember import NewMemory, remember

T0 = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)
# Closed files of other members' kinds: each reads much like the new status of the first file.
OTHERS = [f"Dossier DGE-2024-{300 + n} clos : dommages évalués à {1000 + 90 * n} euros, indemnité versée."
          for n in range(12)]  # fmt: skip


def _story(container: Container, subject: str) -> tuple[str, list[str]]:
    at = iter(T0 + timedelta(days=n) for n in range(100))
    pending = "Dossier DGE-2024-118 : en attente du rapport de l'expert, visite prévue mardi."
    first = remember(container.deps, tenant="t", subject_id=subject, actor="test",
                     items=[NewMemory(pending, occurred_at=next(at))])
    remember(container.deps, tenant="t", subject_id=subject, actor="test",
             items=[NewMemory(text, occurred_at=next(at)) for text in OTHERS])
    last = remember(container.deps, tenant="t", subject_id=subject, actor="test", items=[
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
