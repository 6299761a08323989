"""``RecordCache`` on its own: what it keeps, what it gives back, and the writes that end during a fetch.

Against a model of the store (a dict of the current records): for any sequence of reads in any scope,
writes, access counts and clears, a read gives exactly the current records of the ids asked that are in its scope,
the cache never holds more than its capacity, and it never holds a record that is not the current one."""

from __future__ import annotations

import gc
import pickle
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from carnet.adapters.vectors.edge_cache import RecordCache, flat, rebuilt
from carnet.domain.records import Kind, Memory, Scope, Source, Status

AT = datetime(2026, 1, 5, tzinfo=UTC)
SCOPES = (Scope("t1", "s1"), Scope("t1", "s2"), Scope("t2", "s1"))
IDS = tuple(f"id-{i}" for i in range(4))  # few: reads, writes and counts meet on the same ids


def record(i: str, scope: Scope, version: int) -> Memory:
    return Memory(id=i, scope=scope, kind=Kind.FACT, text=f"sealed {version}", pseudo_text="p", recorded_at=AT,
                  valid_from=AT, updated_at=AT)


class Store:
    """The engine's side: the current records, and how many were read from it."""

    def __init__(self) -> None:
        self.records: dict[str, Memory] = {}
        self.reads = 0

    def fetcher(self, scope: Scope) -> Callable[[list[str]], Sequence[Memory]]:
        def fetch(ids: list[str]) -> Sequence[Memory]:
            self.reads += len(ids)
            found = (self.records.get(i) for i in ids)
            return [m for m in found if m is not None and m.scope == scope]
        return fetch


SCOPE = st.sampled_from(SCOPES[:2])  # two scopes of one tenant: ids meet across scopes often enough
SOME_IDS = st.lists(st.sampled_from(IDS), min_size=1, max_size=3)
OPS = st.lists(st.one_of(
    st.tuples(st.just("read"), SCOPE, SOME_IDS),
    st.tuples(st.just("search"), SCOPE, SOME_IDS),  # a read that keeps what it fetched at once
    st.tuples(st.just("write"), SCOPE, SOME_IDS),
    st.tuples(st.just("delete"), SCOPE, SOME_IDS),
    st.tuples(st.just("access"), SCOPE, SOME_IDS),
    st.tuples(st.just("clear"), SCOPE, st.just([])),
), min_size=15, max_size=60)  # long enough for a record to be kept, then written or counted


@given(ops=OPS, capacity=st.sampled_from([0, 1, 2, 3, 5]))
def test_reads_give_the_current_records_of_their_scope_only(ops: list[tuple[str, Scope, list[str]]],
                                                            capacity: int) -> None:
    store, cache, version = Store(), RecordCache(capacity), 0
    for op, scope, ids in ops:
        if op in ("read", "search"):
            got = cache.records(scope, ids, store.fetcher(scope), keep_at_once=op == "search")
            assert got == {i: m for i in ids if (m := store.records.get(i)) is not None and m.scope == scope}
        elif op == "write":
            version += 1
            store.records.update((i, record(i, scope, version)) for i in ids)
            cache.changed(ids)
        elif op == "delete":
            for i in ids:
                store.records.pop(i, None)
            cache.changed(ids)
        elif op == "access":  # as the adapter does: statistics set on the records found in the scope
            version += 1
            values = {"access_count": version, "last_accessed_at": AT + timedelta(seconds=version)}
            found = [i for i in ids if (m := store.records.get(i)) is not None and m.scope == scope]
            store.records.update((i, replace(store.records[i], **values)) for i in found)
            cache.touched(found, values)
        else:
            cache.clear()
        assert len(cache) <= capacity and len(cache._seen) <= capacity
        assert all(store.records.get(i) == rebuilt(kept, store.records[i].scope) for i, kept in cache._records.items())


TEXT = st.text(max_size=12)
NAME = st.text(min_size=1, max_size=12)
OPTIONAL = st.none() | TEXT
DATES = st.datetimes(timezones=st.just(UTC))
MEMORIES = st.builds(
    Memory, id=TEXT, scope=st.builds(Scope, NAME, NAME), kind=st.sampled_from(Kind), text=TEXT, pseudo_text=TEXT,
    recorded_at=DATES, valid_from=DATES, updated_at=DATES, category=OPTIONAL, tags=st.tuples(TEXT),
    importance=st.floats(allow_nan=False), confidence=st.floats(allow_nan=False), access_count=st.integers(),
    reinforcement_count=st.integers(), last_accessed_at=st.none() | DATES, valid_to=st.none() | DATES,
    expires_at=st.none() | DATES, retention=TEXT, status=st.sampled_from(Status), superseded_by=OPTIONAL,
    sources=st.lists(st.builds(Source, TEXT, TEXT, OPTIONAL, OPTIONAL, OPTIONAL), max_size=2).map(tuple),
    agent_id=OPTIONAL, session_id=OPTIONAL, blind_index=st.tuples(TEXT, TEXT), special=st.tuples(TEXT),
    meta=OPTIONAL, profile=st.booleans())


@settings(max_examples=20)
@given(m=MEMORIES)
def test_a_kept_record_is_the_same_record_and_not_tracked_by_the_garbage_collector(m: Memory) -> None:
    # Everything made before this example is set aside (``gc.freeze``), so the collections below visit only
    # the record and what it was made from: in a test process holding the models, a full collection
    # costs ~0.8 s, and three an example made this the suite's slowest unit test (50 s).
    gc.freeze()
    try:
        kept = flat(pickle.loads(pickle.dumps(m)))  # the record made anew, after the freeze (its tuples too)
        assert rebuilt(kept, Scope(m.scope.tenant, m.scope.subject)) == m
        # A collection untracks a tuple whose items are untracked, in the order the tuples were made:
        # tuples nested three deep (a record's sources) made before the record may need three.
        for _ in range(3):
            gc.collect()
        assert not gc.is_tracked(kept)
    finally:
        gc.unfreeze()


def test_a_record_is_kept_when_fetched_again_and_the_least_recently_fetched_go_first() -> None:
    store, cache = Store(), RecordCache(2)
    scope = SCOPES[0]
    store.records = {i: record(i, scope, 1) for i in IDS[:3]}
    for _ in range(3):
        cache.records(scope, IDS[:2], store.fetcher(scope))
    assert store.reads == 4 and len(cache) == 2  # fetched twice, then kept
    for _ in range(2):
        cache.records(scope, IDS[2:3], store.fetcher(scope))  # the third, kept, pushes out the first
    cache.records(scope, IDS[1:3], store.fetcher(scope))
    assert store.reads == 6
    cache.records(scope, IDS[:1], store.fetcher(scope))
    assert store.reads == 7 and len(cache) == 2


def test_a_search_keeps_its_records_at_the_first_fetch_and_a_lookup_at_the_second() -> None:
    store, cache = Store(), RecordCache(10)
    scope = SCOPES[0]
    store.records = {i: record(i, scope, 1) for i in IDS}
    cache.records(scope, IDS[:2], store.fetcher(scope), keep_at_once=True)  # a search: kept now
    cache.records(scope, IDS[2:], store.fetcher(scope))  # a lookup: noted only
    assert store.reads == 4 and len(cache) == 2
    assert cache.records(scope, IDS, store.fetcher(scope)) == store.records
    assert store.reads == 6 and len(cache) == 4  # the lookup's records fetched again, kept from now on
    cache.records(scope, IDS, store.fetcher(scope), keep_at_once=True)
    assert store.reads == 6


@pytest.mark.parametrize("search", [False, True])
def test_a_write_ending_during_a_fetch_keeps_the_fetched_record_out(search: bool) -> None:
    store, cache = Store(), RecordCache(10)
    scope = SCOPES[0]
    old = record(IDS[0], scope, 1)
    store.records[old.id] = old
    if not search:  # a search would keep it at its first fetch
        cache.records(scope, [old.id], store.fetcher(scope))  # fetched once: the next fetch would keep it

    def fetch_then_write(ids: list[str]) -> Sequence[Memory]:
        got = store.fetcher(scope)(ids)
        store.records[old.id] = replace(old, text="sealed 2")  # the write lands after the fetch read…
        cache.changed([old.id])  # …and ends before the read keeps what it fetched
        return got

    assert cache.records(scope, [old.id], fetch_then_write, keep_at_once=search) == {old.id: old}  # began before
    assert len(cache) == 0
    assert cache.records(scope, [old.id], store.fetcher(scope), keep_at_once=search)[old.id].text == "sealed 2"
    assert len(cache) == 1 and cache.records(scope, [old.id], store.fetcher(scope))[old.id].text == "sealed 2"


def test_access_statistics_written_are_set_on_the_kept_record_which_stays_kept() -> None:
    store, cache = Store(), RecordCache(10)
    scope = SCOPES[0]
    store.records[IDS[0]] = record(IDS[0], scope, 1)
    for _ in range(2):
        cache.records(scope, [IDS[0]], store.fetcher(scope))
    values = {"access_count": 3, "last_accessed_at": AT + timedelta(minutes=1)}
    store.records[IDS[0]] = replace(store.records[IDS[0]], **values)
    cache.touched([IDS[0], IDS[1]], values)  # an id not kept stays not kept
    assert cache.records(scope, [IDS[0]], store.fetcher(scope)) == {IDS[0]: store.records[IDS[0]]}
    assert store.reads == 2 and len(cache) == 1


def test_a_read_overlapping_access_statistics_keeps_nothing() -> None:
    store, cache = Store(), RecordCache(10)
    scope = SCOPES[0]
    old = store.records[IDS[0]] = record(IDS[0], scope, 1)
    cache.records(scope, [old.id], store.fetcher(scope))

    def fetch_then_count(ids: list[str]) -> Sequence[Memory]:
        got = store.fetcher(scope)(ids)
        values = {"access_count": 1, "last_accessed_at": AT}
        store.records[old.id] = replace(old, **values)
        cache.touched([old.id], values)
        return got

    assert cache.records(scope, [old.id], fetch_then_count) == {old.id: old}
    assert len(cache) == 0 and cache.records(scope, [old.id], store.fetcher(scope))[old.id].access_count == 1


def test_a_record_kept_for_one_scope_is_read_again_for_another() -> None:
    store, cache = Store(), RecordCache(10)
    mine, other = SCOPES[0], SCOPES[2]
    store.records[IDS[0]] = record(IDS[0], mine, 1)
    for _ in range(2):
        cache.records(mine, [IDS[0]], store.fetcher(mine))
    assert len(cache) == 1
    assert cache.records(other, [IDS[0]], store.fetcher(other)) == {}
    assert store.reads == 3


def test_a_negative_capacity_is_refused() -> None:
    with pytest.raises(ValueError):
        RecordCache(-1)
