"""A record a newer note may have made untrue comes after the records nobody contests, only when that
newer note is in the same answer (``domain.contested``)."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from carnet.domain.contested import contested_last
from carnet.domain.records import Kind, Memory, Scope

AT = datetime(2026, 1, 1, tzinfo=UTC)


def _m(mid: str, *contesters: str) -> Memory:
    return Memory(id=mid, scope=Scope("t", "s"), kind=Kind.FACT, text=mid, pseudo_text=mid, recorded_at=AT,
                  valid_from=AT, updated_at=AT, contested_by=contesters)


def test_a_contested_record_goes_after_the_others_when_its_contester_is_found() -> None:
    ranked = [_m("old", "new"), _m("x"), _m("new"), _m("y")]
    assert [m.id for m in contested_last(ranked, lambda m: m)] == ["x", "new", "y", "old"]


def test_a_contested_record_keeps_its_place_when_its_contester_is_not_found() -> None:
    ranked = [_m("old", "new"), _m("x"), _m("y")]
    assert [m.id for m in contested_last(ranked, lambda m: m)] == ["old", "x", "y"]


def test_two_records_contesting_each_other_both_go_last_in_their_order() -> None:
    ranked = [_m("a", "b"), _m("x"), _m("b", "a")]
    assert [m.id for m in contested_last(ranked, lambda m: m)] == ["x", "a", "b"]


@given(st.lists(st.tuples(st.integers(0, 6), st.sets(st.integers(0, 8), max_size=3)), max_size=8,
                unique_by=lambda t: t[0]))
def test_the_same_records_come_back_and_each_group_keeps_its_order(spec: list[tuple[int, set[int]]]) -> None:
    ranked = [_m(str(i), *(str(c) for c in cs)) for i, cs in spec]
    out = contested_last(ranked, lambda m: m)
    ids = {m.id for m in ranked}
    late = [m for m in ranked if ids.intersection(m.contested_by)]
    assert out == [m for m in ranked if m not in late] + late
