"""A stored payload that does not decode is reported by id, never raised: whatever its fields hold."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from carnet.adapters.vectors import payload as pl
from carnet.domain.records import Kind, Memory, Scope, Source
from carnet.domain.unreadable import PAYLOAD_INVALID, Unreadable
from carnet.ports import AccessUpdate

AT = datetime(2026, 1, 1, tzinfo=UTC)
ID = "6f1c0f4e-3f0b-4a43-9a1d-2d9f4b8a6b11"
GOOD = pl.to_payload(Memory(id=ID, scope=Scope("t", "h"), kind=Kind.FACT, text="enc1:x", pseudo_text="enc1:y",
                            recorded_at=AT, valid_from=AT, updated_at=AT, valid_to=AT, last_accessed_at=AT,
                            tags=("a",), sources=(Source("api", "k", "s"),)))

JSON: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6)
FIELDS = sorted(GOOD)


@dataclass(frozen=True)
class _Point:
    """A stored point as an engine returns it (an id and a payload)."""

    id: str
    payload: dict[str, Any] | None


@settings(max_examples=400, deadline=None, database=None)
@given(removed=st.sets(st.sampled_from(FIELDS), max_size=3),
       changed=st.dictionaries(st.sampled_from(FIELDS), JSON, max_size=3))
def test_any_damaged_payload_is_reported_by_id_or_decodes(removed: set[str], changed: dict[str, Any]) -> None:
    damaged = {k: v for k, v in {**GOOD, **changed}.items() if k not in removed}
    skipped: list[Unreadable] = []
    memory = pl.decode(ID, damaged, skipped)
    if memory is None:
        assert skipped == [Unreadable(ID, PAYLOAD_INVALID)]
    else:
        assert skipped == [] and memory.id == ID and isinstance(memory.text, str)


@settings(max_examples=200, deadline=None, database=None)
@given(field=st.sampled_from(["valid_from", "recorded_at", "updated_at", "valid_to", "last_accessed_at"]),
       value=st.floats(min_value=2.6e11) | st.floats(max_value=-6.3e10) | st.just(float("nan")))
def test_a_date_outside_years_1_to_9999_is_unreadable_not_an_error(field: str, value: float) -> None:
    skipped: list[Unreadable] = []
    assert pl.decoded([_Point(ID, {**GOOD, field: value}), _Point("other", None)], skipped) == []
    assert skipped == [Unreadable(ID, PAYLOAD_INVALID), Unreadable("other", PAYLOAD_INVALID)]


def test_the_profile_flag_round_trips_and_older_payloads_are_not_profile() -> None:
    flagged = pl.from_payload(ID, {**GOOD, pl.PROFILE: pl.PROFILE_MARK})
    assert flagged.profile and pl.to_payload(flagged)[pl.PROFILE] == pl.PROFILE_MARK
    assert GOOD[pl.PROFILE] is None and not pl.from_payload(ID, GOOD).profile
    older = {k: v for k, v in GOOD.items() if k != pl.PROFILE}  # written before the flag existed
    assert not pl.from_payload(ID, older).profile


def test_contesting_notes_round_trip_and_older_payloads_have_none() -> None:
    contested = pl.from_payload(ID, {**GOOD, "contested_by": ["a", "b"]})
    assert contested.contested_by == ("a", "b") and pl.to_payload(contested)["contested_by"] == ["a", "b"]
    older = {k: v for k, v in GOOD.items() if k != "contested_by"}  # written before the mark existed
    assert pl.from_payload(ID, older).contested_by == ()
    assert pl.from_payload(ID, {**GOOD, "contested_by": [1, "a", None, {"x": 2}]}).contested_by == ("a",)


def test_the_profile_filter_is_one_equality_on_the_indexed_flag() -> None:
    from carnet.ports import RecordFilter

    assert pl.Equals(pl.PROFILE, pl.PROFILE_MARK) in pl.narrowing(RecordFilter(profile_only=True))
    assert all(getattr(c, "key", None) != pl.PROFILE for c in pl.narrowing(RecordFilter()))
    assert pl.PROFILE in pl.KEYWORD_INDEXES


@settings(max_examples=200, deadline=None, database=None)
@given(count=JSON, last=JSON)
def test_access_fields_read_back_or_the_record_is_left_alone(count: Any, last: Any) -> None:
    """``record_access`` reads only the two access fields: whatever they hold, the statistics of a sound
    record add up and a record whose fields are damaged is left as it is (no error, no other's change)."""
    other = "0b7a4f55-2d35-4c8e-9a5e-3c1f2b6d7e80"
    points = [_Point(ID, {pl.ACCESS_COUNT: count, pl.LAST_ACCESSED_AT: last}), _Point(other, {pl.ACCESS_COUNT: 2})]
    states = pl.access_states(points)
    later = datetime(2026, 2, 1, tzinfo=UTC)
    out = pl.access_payloads(states, [AccessUpdate(ID, 1, later), AccessUpdate(other, 3, later)])
    assert out[other] == {pl.ACCESS_COUNT: 5, pl.LAST_ACCESSED_AT: later.timestamp()}
    sound = isinstance(count, int) and not isinstance(count, bool) and (
        last is None or (isinstance(last, int | float) and not isinstance(last, bool) and math.isfinite(last)))
    assert (ID in out) is sound
    if sound:
        assert out[ID][pl.ACCESS_COUNT] == count + 1
        assert out[ID][pl.LAST_ACCESSED_AT] == (later.timestamp() if last is None else max(last, later.timestamp()))


def test_a_record_never_written_to_counts_from_zero() -> None:
    twice = [AccessUpdate(ID, 1, AT), AccessUpdate(ID, 1, AT)]
    out = pl.access_payloads(pl.access_states([_Point(ID, {})]), twice)
    assert out == {ID: {pl.ACCESS_COUNT: 2, pl.LAST_ACCESSED_AT: AT.timestamp()}}


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.uuids().map(str), st.tuples(st.integers(0, 5), st.sampled_from([None, 1.0e9, 1.5e9])),
                       max_size=40))
def test_grouped_access_writes_each_record_its_own_values_once(values: dict[str, tuple[int, float | None]]) -> None:
    payloads = {i: {pl.ACCESS_COUNT: c, pl.LAST_ACCESSED_AT: t} for i, (c, t) in values.items()}
    groups = pl.grouped_access(payloads)
    written = [(i, fields) for ids, fields in groups for i in ids]
    assert sorted(i for i, _ in written) == sorted(payloads)  # every record once, none invented
    assert all(fields == payloads[i] for i, fields in written)  # each with its own values
    assert len(groups) == len({(c, t) for c, t in values.values()})  # one write per distinct pair
