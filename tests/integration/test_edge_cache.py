"""The embedded shard with its records kept decoded (``edge_cache``) answers exactly as without.

Two real qdrant-edge shards take the same generated sequence of writes (upsert, payload replaced,
access counted, moved to another scope, deleted) and reads (get with ids of any scope, hybrid search,
newest): one keeps at most three records decoded (so eviction runs too), the other none. Every read
must give the same records with the same fields and scores. Then the interleavings a test cannot
generate: a write that ends while a read fetches."""

from __future__ import annotations

import shutil
import tempfile
import threading
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from carnet.adapters.vectors.qdrant_edge import EdgeVectorIndex
from carnet.domain.records import Kind, Memory, Scope, Status, point_id
from carnet.domain.unreadable import Skipped
from carnet.ports import AccessUpdate, IndexedMemory, RecordFilter, SparseVector, VectorIndex

DIM = 8
NOW = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)
SCOPES = (Scope("assur-nord", "h-1"), Scope("assur-nord", "h-2"), Scope("banque-sud", "h-1"))
KEYS = tuple(f"k{i}" for i in range(6))
ALL = RecordFilter(statuses=None)


def unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def record(scope: Scope, key: str, version: int, days: int, status: Status = Status.ACTIVE) -> Memory:
    at = NOW + timedelta(days=days)
    return Memory(id=point_id(scope, key), scope=scope, kind=Kind.FACT, text=f"sealed:{key}:{version}",
                  pseudo_text=f"pseudo {key} {version}", recorded_at=at, valid_from=at, updated_at=at,
                  status=status, profile=version % 2 == 0)


def indexed(m: Memory, seed: int) -> IndexedMemory:
    """Vectors unique to the seed: no two records tie on either half's score. (Among tied scores the engine
    picks which ones make the limit in an order of its own, not the same in two shards.)"""
    return IndexedMemory(m, unit(seed), SparseVector([seed % 5, 7], [1.0 + seed / 1000, 0.5]))


def hits(index: VectorIndex, scope: Scope, seed: int, where: RecordFilter) -> list[tuple[str, str, float, Memory]]:
    found = index.hybrid_search(scope, dense=unit(seed), sparse=SparseVector([seed % 5], [1.0]), limit=4,
                                where=where, with_vectors=True)
    return [(half, c.memory.id, round(c.score, 5), c.memory)
            for half, cs in (("dense", found.dense), ("sparse", found.sparse)) for c in cs]


class SameAnswers(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="edge-cache-"))
        self.cached = EdgeVectorIndex(self.root / "cached", DIM, cached=3)
        self.plain = EdgeVectorIndex(self.root / "plain", DIM, cached=0)
        self.stored: dict[str, Memory] = {}  # what the shards hold, by id
        self.version = 0
        self.seeds = 0  # every vector written is new: see ``indexed``

    def both(self) -> tuple[EdgeVectorIndex, EdgeVectorIndex]:
        return self.cached, self.plain

    def teardown(self) -> None:
        for index in self.both():
            index.close()
        shutil.rmtree(self.root, ignore_errors=True)

    @rule(scope=st.sampled_from(SCOPES), keys=st.lists(st.sampled_from(KEYS), min_size=1, max_size=3, unique=True),
          days=st.integers(-30, 30), superseded=st.booleans())
    def upsert(self, scope: Scope, keys: list[str], days: int, superseded: bool) -> None:
        taken = {i for i, m in self.stored.items() if m.scope != scope}  # ids moved here from another scope
        keys = [k for k in keys if point_id(scope, k) not in taken]
        if not keys:
            return
        self.version += 1
        status = Status.SUPERSEDED if superseded else Status.ACTIVE
        items = []
        for i, k in enumerate(keys):
            self.seeds += 1
            items.append(indexed(record(scope, k, self.version, days + i, status), self.seeds))
        for index in self.both():
            index.upsert(scope, items)
        self.stored.update((i.memory.id, i.memory) for i in items)

    @rule(data=st.data())
    def replace_payload(self, data: st.DataObject) -> None:
        if not self.stored:
            return
        old = self.stored[data.draw(st.sampled_from(sorted(self.stored)))]
        self.version += 1
        new = replace(old, text=f"sealed:v{self.version}", status=data.draw(st.sampled_from(list(Status))))
        for index in self.both():
            index.replace_payload(new.scope, [new])
        self.stored[new.id] = new

    @rule(data=st.data(), count=st.integers(1, 3), minutes=st.integers(-5, 5))
    def record_access(self, data: st.DataObject, count: int, minutes: int) -> None:
        if not self.stored:
            return
        m = self.stored[data.draw(st.sampled_from(sorted(self.stored)))]
        for index in self.both():
            index.record_access(m.scope, [AccessUpdate(m.id, count, NOW + timedelta(minutes=minutes))])
        self.stored[m.id] = self.plain.get(m.scope, [m.id])[0]

    @rule(data=st.data(), to=st.sampled_from(SCOPES))
    def rescope(self, data: st.DataObject, to: Scope) -> None:
        if not self.stored:
            return
        m = self.stored[data.draw(st.sampled_from(sorted(self.stored)))]
        if m.scope == to:
            return
        moved = replace(m, scope=to)
        self.seeds += 1
        for index in self.both():
            index.rescope(m.scope, to, [(moved, SparseVector([3], [1.0 + self.seeds / 1000]))])
        self.stored[m.id] = moved

    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        if not self.stored:
            return
        m = self.stored.pop(data.draw(st.sampled_from(sorted(self.stored))))
        for index in self.both():
            index.delete(m.scope, [m.id])

    @rule(scope=st.sampled_from(SCOPES), keys=st.lists(st.sampled_from(KEYS), max_size=4),
          of=st.sampled_from(SCOPES))
    def get(self, scope: Scope, keys: list[str], of: Scope) -> None:
        """Ids of any scope, asked in any scope: a record kept decoded for one scope never shows in another."""
        ids = [point_id(of, k) for k in keys] + [m.id for m in self.stored.values() if m.scope == of][:2]
        got = self.cached.get(scope, ids)
        assert got == self.plain.get(scope, ids)
        assert all(m.scope == scope and self.stored[m.id] == m for m in got)

    @rule(scope=st.sampled_from(SCOPES), seed=st.integers(0, 50), active=st.booleans())
    def search(self, scope: Scope, seed: int, active: bool) -> None:
        where = RecordFilter() if active else ALL
        assert hits(self.cached, scope, seed, where) == hits(self.plain, scope, seed, where)

    @rule(scope=st.sampled_from(SCOPES), limit=st.integers(1, 5), profile=st.booleans())
    def newest(self, scope: Scope, limit: int, profile: bool) -> None:
        where = RecordFilter(profile_only=profile)
        assert self.cached.newest(scope, where=where, limit=limit) == self.plain.newest(scope, where=where, limit=limit)

    @invariant()
    def holds_what_was_written(self) -> None:
        for scope in SCOPES:
            mine = sorted(i for i, m in self.stored.items() if m.scope == scope)
            assert sorted(m.id for m in self.cached.get(scope, mine)) == mine


SameAnswers.TestCase.settings = settings(max_examples=30, stateful_step_count=25, deadline=None,
                                         suppress_health_check=[HealthCheck.too_slow])
TestSameAnswers = SameAnswers.TestCase


def test_a_write_ending_during_a_read_is_never_undone_by_it(tmp_path: Path) -> None:
    """A read fetches a record; before it keeps it, a write replaces the record and drops it from the
    cache. The read answers with what it fetched (it began before the write) but keeps nothing: the
    next read sees the write."""
    index = EdgeVectorIndex(tmp_path / "shard", DIM, cached=100)
    scope = SCOPES[0]
    old, new = record(scope, "k0", 1, 0), record(scope, "k0", 2, 0)
    index.upsert(scope, [indexed(old, 1)])
    assert index.get(scope, [old.id]) == [old]  # fetched once: the next fetch would keep it
    fetch = index._by_ids
    fetched, write_done = threading.Event(), threading.Event()

    def slow_fetch(*args: Any, **kwargs: Any) -> list[Any]:
        got = fetch(*args, **kwargs)
        fetched.set()
        assert write_done.wait(10)
        return got

    index._by_ids = slow_fetch  # type: ignore[method-assign]
    answers: list[list[Memory]] = []
    reader = threading.Thread(target=lambda: answers.append(index.get(scope, [old.id])))
    reader.start()
    assert fetched.wait(10)
    index._by_ids = fetch  # type: ignore[method-assign]
    index.replace_payload(scope, [new])
    write_done.set()
    reader.join(10)
    assert answers == [[old]]
    assert index.get(scope, [old.id]) == [new]
    index.close()


def test_a_damaged_record_is_noted_at_every_read_and_never_kept(tmp_path: Path) -> None:
    index = EdgeVectorIndex(tmp_path / "shard", DIM, cached=100)
    scope = SCOPES[0]
    good, bad = record(scope, "k0", 1, 0), record(scope, "k1", 1, 1)
    index.upsert(scope, [indexed(good, 1), indexed(bad, 2)])
    from qdrant_edge import UpdateOperation

    index._shard.update(UpdateOperation.set_payload([bad.id], {"recorded_at": "not a number"}))
    for _ in range(2):
        skipped: Skipped = []
        assert index.get(scope, [good.id, bad.id], skipped=skipped) == [good]
        assert [u.id for u in skipped] == [bad.id]
        skipped = []
        assert [m.id for m in index.newest(scope, where=ALL, limit=5, skipped=skipped)] == [good.id]
        assert [u.id for u in skipped] == [bad.id]
        skipped = []
        assert [c.memory.id for c in index.hybrid_search(scope, dense=unit(2), sparse=None, limit=5, where=ALL,
                                                         skipped=skipped).dense] == [good.id]
        assert [u.id for u in skipped] == [bad.id]
    assert len(index._cache) == 1
    index.close()


def counted_reads(index: EdgeVectorIndex) -> list[list[str]]:
    """The ids of every read of records the adapter asks the engine for from now on, one list a read."""
    reads: list[list[str]] = []
    fetch = index._by_ids

    def counted(scope: Scope, wanted: list[str], **kwargs: Any) -> list[Any]:
        reads.append(wanted)
        return fetch(scope, wanted, **kwargs)

    index._by_ids = counted  # type: ignore[method-assign]
    return reads


def test_a_search_keeps_its_records_at_once_and_a_lookup_by_id_at_its_second_read(tmp_path: Path) -> None:
    """The next turn of a call asks about the same member: what a search read (hybrid or newest) is kept
    from its first read; records looked up by id once are not (only their ids are noted)."""
    index = EdgeVectorIndex(tmp_path / "shard", DIM, cached=100)
    scope = SCOPES[0]
    made = [record(scope, k, 1, i) for i, k in enumerate(KEYS)]
    index.upsert(scope, [indexed(m, i) for i, m in enumerate(made)])
    reads = counted_reads(index)
    found = index.hybrid_search(scope, dense=unit(0), sparse=None, limit=2, where=ALL)
    searched = {c.memory.id for c in found.dense}
    newest = {m.id for m in index.newest(scope, where=ALL, limit=2)}
    assert len(searched) == 2 and len(newest) == 2 and len(index._cache) == len(searched | newest)
    looked_up = [m.id for m in made if m.id not in searched | newest][:1]
    assert index.get(scope, looked_up) and len(index._cache) == len(searched | newest)
    reads.clear()
    again = index.hybrid_search(scope, dense=unit(0), sparse=None, limit=2, where=ALL)
    assert [c.memory for c in again.dense] == [c.memory for c in found.dense] and reads == []
    assert {m.id for m in index.newest(scope, where=ALL, limit=2)} == newest and reads == []
    index.get(scope, looked_up)
    assert reads == [looked_up] and len(index._cache) == len(searched | newest) + 1
    index.close()


def _kept_and_plain(tmp_path: Path) -> tuple[EdgeVectorIndex, EdgeVectorIndex, Scope, list[str]]:
    """A shard that keeps records and one that keeps none, holding the same three records, each read twice
    (so the first shard keeps them)."""
    cached = EdgeVectorIndex(tmp_path / "cached", DIM, cached=100)
    plain = EdgeVectorIndex(tmp_path / "plain", DIM, cached=0)
    scope = SCOPES[0]
    shown = [record(scope, k, 1, i) for i, k in enumerate(KEYS[:3])]
    ids = [m.id for m in shown]
    for index in (cached, plain):
        index.upsert(scope, [indexed(m, i) for i, m in enumerate(shown)])
        for _ in range(2):
            index.get(scope, ids)
    return cached, plain, scope, ids


def test_access_statistics_reach_the_kept_records_without_reading_them_again(tmp_path: Path) -> None:
    """Counting the records a search showed sets the same count and time on the kept records as the
    engine stores (read back by a shard that keeps nothing), and they stay kept: the next read of them
    asks the engine for nothing."""
    cached, plain, scope, ids = _kept_and_plain(tmp_path)
    for index in (cached, plain):
        index.record_access(scope, [AccessUpdate(i, 2, NOW + timedelta(seconds=7)) for i in ids[:2]])
        index.record_access(scope, [AccessUpdate(ids[0], 1, NOW + timedelta(seconds=30.25))])
    assert len(cached._cache) == 3
    reads = counted_reads(cached)
    got = cached.get(scope, ids)
    assert got == plain.get(scope, ids) and reads == []
    assert [(m.access_count, m.last_accessed_at) for m in got] == [
        (3, NOW + timedelta(seconds=30.25)), (2, NOW + timedelta(seconds=7)), (0, None)]
    for index in (cached, plain):
        index.close()


def test_counting_kept_records_reads_none_of_them_and_an_earlier_time_reads_it(tmp_path: Path) -> None:
    """The access state of a kept record is the one the engine stores (every write sets or drops it), so
    a flush counting kept records reads nothing from the engine; one whose update is not after its kept
    time (the clock went back) is read, so its stored time never moves back. The stored figures are a
    shard's that keeps nothing, given the same calls."""
    cached, plain, scope, ids = _kept_and_plain(tmp_path)
    reads = counted_reads(cached)
    steps = [[AccessUpdate(i, 1, NOW + timedelta(seconds=10)) for i in ids[:2]],
             [AccessUpdate(ids[0], 2, NOW + timedelta(seconds=20.5)), AccessUpdate(ids[2], 1, NOW)],
             [AccessUpdate(ids[1], 1, NOW + timedelta(seconds=5))]]  # before ids[1]'s kept time
    for updates in steps:
        for index in (cached, plain):
            index.record_access(scope, updates)
    assert reads == [[], [], [ids[1]]]
    assert cached.get(scope, ids) == plain.get(scope, ids)
    assert [(m.access_count, m.last_accessed_at) for m in plain.get(scope, ids)] == [
        (3, NOW + timedelta(seconds=20.5)), (2, NOW + timedelta(seconds=10)), (1, NOW)]
    for index in (cached, plain):
        index.close()


def test_a_damaged_access_time_does_not_stop_the_counts_of_the_others(tmp_path: Path) -> None:
    """A kept record whose stored access time no datetime holds (finite, so counted on): its new time
    does not read back either, so the write goes ahead and the record is dropped, not kept wrong; the
    other records of the same flush are counted and stay kept."""
    from qdrant_edge import UpdateOperation

    index = EdgeVectorIndex(tmp_path / "shard", DIM, cached=100)
    scope = SCOPES[0]
    good, bad = record(scope, "k0", 1, 0), record(scope, "k1", 1, 1)
    index.upsert(scope, [indexed(good, 1), indexed(bad, 2)])
    for _ in range(2):
        index.get(scope, [good.id, bad.id])
    index._shard.update(UpdateOperation.set_payload([bad.id], {"last_accessed_at": 1e300}))
    index._cache.changed([bad.id])  # the damage written around the adapter, then seen by it once more
    index.get(scope, [bad.id], skipped=[])
    index.record_access(scope, [AccessUpdate(m.id, 1, NOW) for m in (good, bad)])
    assert [m.access_count for m in index.get(scope, [good.id])] == [1]
    assert good.id in index._cache._records and bad.id not in index._cache._records
    index.close()
