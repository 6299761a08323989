"""A question naming a person lifts the lines that person said, on the real stack (pseudonymisation
finds the name in the question; ``recall.lift_speakers``). Sentences written for this test."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from carnet.bootstrap.container import Container
from carnet.services.memories import recall
from carnet.services.memories.recall import Query, search
from carnet.services.memories.remember import NewMemory, remember

AT = datetime(2025, 6, 2, tzinfo=UTC)
HERS = "Mélanie: We went camping in the forest with the kids, by the river."
THEIRS = "Caroline: Where was your camping trip, Mélanie? The photos look great."
QUESTION = "Where did Mélanie go camping?"


def _ask(container: Container, subject: str) -> list[str]:
    remember(container.deps, tenant="t", subject_id=subject, actor="a",
             items=[NewMemory(text=t, occurred_at=AT) for t in (HERS, THEIRS)])
    return [r.memory.text for r in search(container.deps, tenant="t", subject_id=subject, query=Query(QUESTION, k=2))]


def test_the_named_person_s_own_line_comes_first(container: Container) -> None:
    assert _ask(container, "D1")[0] == HERS


def test_without_the_lift_the_other_speaker_s_line_wins(container: Container, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the first test overturns: the line that repeats the question's words."""
    monkeypatch.setattr(recall, "SPEAKER_LIFT", 0.0)
    assert _ask(container, "D2")[0] == THEIRS
