from dataclasses import fields, replace
from datetime import UTC, datetime, timedelta

from carnet.domain.records import MAX_CONTESTERS, Kind, Memory, Scope, Source, Status


def test_with_texts_keeps_every_other_field() -> None:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    # every field set to a value distinct from its default, so a misplaced positional argument shows
    m = Memory(id="i", scope=Scope("t", "s"), kind=Kind.EPISODE, text="a", pseudo_text="b", recorded_at=at,
               valid_from=at - timedelta(days=1), updated_at=at + timedelta(days=1), category="c", tags=("x",),
               importance=0.9, confidence=0.8, access_count=3, reinforcement_count=2,
               last_accessed_at=at + timedelta(days=2), valid_to=at + timedelta(days=3),
               expires_at=at + timedelta(days=4), retention="r", status=Status.SUPERSEDED, superseded_by="j",
               sources=(Source("turn", "D1:1"),), agent_id="ag", session_id="se", blind_index=("b1",),
               special=("health",), meta="enc1:m", profile=True, contested_by=("k",))
    assert m.with_texts("A", "B") == replace(m, text="A", pseudo_text="B")
    other = (Source("api", "k", "s2", "r", "f"),)
    assert m.with_metadata(category="d", tags=("y",), session_id="s2", sources=other, meta=None) == replace(
        m, category="d", tags=("y",), session_id="s2", sources=other, meta=None)
    assert len(fields(Memory)) == 28  # a new field must be added to with_texts and with_metadata too


def test_a_record_keeps_its_newest_contesters_once_and_is_settled_one_or_all() -> None:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    m = Memory(id="i", scope=Scope("t", "s"), kind=Kind.FACT, text="a", pseudo_text="a", recorded_at=at,
               valid_from=at, updated_at=at)
    for n in range(MAX_CONTESTERS + 2):
        m = m.contested(by=f"n{n}").contested(by=f"n{n}")
    assert m.contested_by == tuple(f"n{n}" for n in range(2, MAX_CONTESTERS + 2))
    assert m.settled(by="n5").contested_by == tuple(c for c in m.contested_by if c != "n5")
    assert m.settled(by="absent") is m and m.settled().contested_by == ()
