"""Contract of the ``VectorIndex`` port, run against both adapters.

``edge``: a real qdrant-edge shard in ``tmp_path``. ``server``: the server adapter's code path over
qdrant-client's local mode (same API as a Qdrant server; it ignores payload indexes and says so in
a warning, which is the one warning silenced here). ``rest``: the server adapter, built by
``connect`` as in production, over HTTP to the Qdrant test server (``tests/support/qdrant_rest``:
Qdrant's REST protocol on qdrant-edge shards, payload indexes included), a collection per test.
``rest-tiered``: the same on a tiered collection (custom sharding: tenant ``banque-sud`` promoted
to a shard of its own, the others in the fallback shard), so isolation holds across shards too.

Isolation tests put two scopes side by side with identical vectors and tokens, so that only the
scope filter inside the adapter keeps them apart (removing it makes them fail: checked by hand).
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from uuid import uuid4

import numpy as np
import pytest
from qdrant_client import QdrantClient

from carnet.adapters.vectors import payload as pl
from carnet.adapters.vectors.qdrant_distribution import Distribution
from carnet.adapters.vectors.qdrant_edge import EdgeVectorIndex
from carnet.adapters.vectors.qdrant_server import ServerVectorIndex, connect
from carnet.domain.records import Kind, Memory, Scope, Source, Status, point_id
from carnet.errors import Conflict, DependencyUnavailable, InvalidInput, StoreLocked
from carnet.ports import AccessUpdate, IndexedMemory, RecordFilter, SparseVector, Vector, VectorIndex
from tests.support.qdrant_rest import RunningQdrant
from tests.support.sparse_copy import copy_tree

DIM = 16
NOW = datetime(2025, 3, 14, 9, 26, 53, 589793, tzinfo=UTC)
SCOPE = Scope(tenant="assur-nord", subject="h-5f1c")
ALL = RecordFilter(statuses=None)
LOCAL_MODE_INDEX_WARNING = "Payload indexes have no effect in the local Qdrant"


def unit(seed: int) -> Vector:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def memory(scope: Scope, key: str, **fields: object) -> Memory:
    base = Memory(
        id=point_id(scope, key),
        scope=scope,
        kind=Kind.FACT,
        text=f"enc:{key}",
        pseudo_text=f"pseudo {key}",
        recorded_at=NOW,
        valid_from=NOW,
        updated_at=NOW,
    )
    return replace(base, **fields)  # type: ignore[arg-type]


def item(m: Memory, seed: int, tokens: tuple[int, ...] = (7,)) -> IndexedMemory:
    return IndexedMemory(m, unit(seed), SparseVector(list(tokens), [1.0] * len(tokens)))


def open_server(client: QdrantClient, dim: int = DIM) -> ServerVectorIndex:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=LOCAL_MODE_INDEX_WARNING, category=UserWarning)
        return ServerVectorIndex(client, "memories", dim)


@pytest.fixture(scope="session")
def empty_shard(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new shard with its payload indexes, made once (creating the indexes takes ~1 s)."""
    path = tmp_path_factory.mktemp("template") / "vectors"
    EdgeVectorIndex(path, DIM).close()
    return path


@pytest.fixture
def shard_path(tmp_path: Path, empty_shard: Path) -> Path:
    """Where a test opens its own edge index: a copy of the empty shard."""
    copy_tree(empty_shard, tmp_path / "vectors")
    return tmp_path / "vectors"


def open_rest(qdrant: RunningQdrant, collection: str, dim: int = DIM) -> ServerVectorIndex:
    """``connect`` (the production entry point) to the Qdrant test server."""
    return connect(url=qdrant.url, api_key=qdrant.api_key, ca_cert=qdrant.ca_cert, collection=collection, dim=dim)


def drop(qdrant: RunningQdrant, collection: str) -> None:
    client = QdrantClient(url=qdrant.url, api_key=qdrant.api_key, check_compatibility=False)
    try:
        client.delete_collection(collection)
    finally:
        client.close()


def open_tiered(qdrant: RunningQdrant, collection: str, promoted: str = "banque-sud") -> ServerVectorIndex:
    """A tiered collection (custom sharding, fallback shard ``default``) where the operator gave
    ``promoted`` a shard of its own before it had data: its calls go there, the others' to the fallback."""
    idx = connect(url=qdrant.url, api_key=qdrant.api_key, ca_cert=qdrant.ca_cert, collection=collection, dim=DIM,
                  distribution=Distribution(tiered=True))
    client = QdrantClient(url=qdrant.url, api_key=qdrant.api_key, check_compatibility=False)
    try:
        client.create_shard_key(collection, promoted, shards_number=1)
    finally:
        client.close()
    return idx


@pytest.fixture(params=["edge", "edge-cached", "server", "rest", "rest-tiered"])
def index(request: pytest.FixtureRequest, tmp_path: Path, empty_shard: Path) -> Iterator[VectorIndex]:
    idx: VectorIndex
    qdrant: RunningQdrant | None = None
    collection = f"memories-{uuid4().hex}"
    if request.param.startswith("edge"):  # without records kept decoded (the default) and with
        copy_tree(empty_shard, tmp_path / "vectors")
        idx = EdgeVectorIndex(tmp_path / "vectors", DIM, cached=1000 if request.param == "edge-cached" else 0)
    elif request.param == "server":
        idx = open_server(QdrantClient(":memory:"))
    elif request.param == "rest":
        qdrant = request.getfixturevalue("qdrant_rest")
        idx = open_rest(qdrant, collection)
    else:
        qdrant = request.getfixturevalue("qdrant_rest")
        idx = open_tiered(qdrant, collection)
    try:
        yield idx
    finally:
        idx.close()
        if qdrant is not None:
            drop(qdrant, collection)


def search(
    index: VectorIndex,
    scope: Scope,
    seed: int,
    *,
    tokens: tuple[int, ...] = (7,),
    where: RecordFilter = ALL,
    limit: int = 50,
    with_vectors: bool = False,
) -> tuple[list[str], list[str]]:
    hits = index.hybrid_search(
        scope,
        dense=unit(seed),
        sparse=SparseVector(list(tokens), [1.0] * len(tokens)),
        limit=limit,
        where=where,
        with_vectors=with_vectors,
    )
    return [c.memory.id for c in hits.dense], [c.memory.id for c in hits.sparse]


def scroll_all(index: VectorIndex, scope: Scope, where: RecordFilter = ALL, limit: int = 10) -> list[Memory]:
    out: list[Memory] = []
    cursor: str | None = None
    while True:
        page, cursor = index.scroll(scope, where=where, limit=limit, offset=cursor)
        out += page
        if cursor is None:
            return out


# -- records ---------------------------------------------------------------------------------------


def test_every_field_round_trips(index: VectorIndex) -> None:
    full = memory(
        SCOPE,
        "full",
        kind=Kind.PROCEDURE,
        category="sinistre",
        tags=("habitation", "tempête"),
        importance=0.9,
        confidence=0.55,
        access_count=3,
        reinforcement_count=2,
        last_accessed_at=NOW + timedelta(seconds=1),
        valid_to=NOW + timedelta(days=3),
        expires_at=NOW + timedelta(days=365),
        retention="art9",
        status=Status.SUPERSEDED,
        superseded_by=point_id(SCOPE, "newer"),
        sources=(Source("turn", "D1:3", "S1"), Source("api", "idem-1")),
        agent_id="agent-7",
        session_id="S1",
    )
    bare = memory(SCOPE, "bare")
    index.upsert(SCOPE, [item(full, 1), item(bare, 2)])
    assert index.get(SCOPE, [full.id, bare.id]) == [full, bare]
    assert index.get(SCOPE, [full.id])[0].recorded_at.tzinfo is not None


def test_get_keeps_the_order_asked_and_ignores_unknown_or_malformed_ids(index: VectorIndex) -> None:
    a, b = memory(SCOPE, "a"), memory(SCOPE, "b")
    index.upsert(SCOPE, [item(a, 1), item(b, 2)])
    unknown = point_id(SCOPE, "never-written")
    assert [m.id for m in index.get(SCOPE, [b.id, "not-a-uuid", unknown, a.id, b.id])] == [b.id, a.id]
    assert index.get(SCOPE, []) == []


def test_upsert_twice_overwrites(index: VectorIndex) -> None:
    m = memory(SCOPE, "a")
    index.upsert(SCOPE, [item(m, 1)])
    index.upsert(SCOPE, [item(replace(m, text="enc:v2"), 2)])
    assert index.count(SCOPE, where=ALL) == 1
    assert index.get(SCOPE, [m.id])[0].text == "enc:v2"
    assert search(index, SCOPE, 2, limit=1)[0] == [m.id]


def test_a_record_of_another_scope_or_a_naive_datetime_is_refused(index: VectorIndex) -> None:
    other = memory(Scope(SCOPE.tenant, "h-other"), "a")
    with pytest.raises(ValueError, match="another scope"):
        index.upsert(SCOPE, [item(other, 1)])
    with pytest.raises(ValueError, match="another scope"):
        index.replace_payload(SCOPE, [other])
    with pytest.raises(ValueError, match="naive"):
        index.upsert(SCOPE, [item(memory(SCOPE, "n", recorded_at=datetime(2025, 1, 1)), 1)])
    assert index.count(SCOPE, where=ALL) == 0


BAD_VECTORS = {
    "dense of another size": (np.ones(DIM + 1, np.float32), SparseVector([1], [1.0])),
    "dense with a NaN": (np.full(DIM, np.nan, np.float32), SparseVector([1], [1.0])),
    "more indices than values": (unit(1), SparseVector([1, 2], [1.0])),  # bricks a qdrant-edge 0.9.0 shard
    "more values than indices": (unit(1), SparseVector([1], [1.0, 2.0])),
    "repeated index": (unit(1), SparseVector([1, 1], [1.0, 1.0])),
    "index beyond u32": (unit(1), SparseVector([2**32], [1.0])),
    "infinite weight": (unit(1), SparseVector([1], [float("inf")])),
}


@pytest.mark.parametrize("bad", list(BAD_VECTORS), ids=list(BAD_VECTORS))
def test_malformed_vectors_never_reach_the_engine(index: VectorIndex, bad: str) -> None:
    dense, sparse = BAD_VECTORS[bad]
    with pytest.raises(ValueError, match="vector"):
        index.upsert(SCOPE, [IndexedMemory(memory(SCOPE, "bad"), dense, sparse)])
    with pytest.raises(ValueError, match="vector"):
        index.hybrid_search(SCOPE, dense=dense, sparse=sparse, limit=5, where=ALL)
    index.upsert(SCOPE, [item(memory(SCOPE, "good"), 1)])  # the store still takes writes
    assert [m.id for m in index.get(SCOPE, [point_id(SCOPE, "good"), point_id(SCOPE, "bad")])] == [
        point_id(SCOPE, "good")
    ]


def test_delete_removes_only_the_ids_given(index: VectorIndex) -> None:
    ms = [memory(SCOPE, k) for k in "abc"]
    index.upsert(SCOPE, [item(m, i) for i, m in enumerate(ms)])
    index.delete(SCOPE, [ms[0].id, "not-a-uuid", point_id(SCOPE, "never-written")])
    assert [m.id for m in index.get(SCOPE, [m.id for m in ms])] == [ms[1].id, ms[2].id]
    assert ms[0].id not in search(index, SCOPE, 0)[0]
    index.delete(SCOPE, [])


# -- search ----------------------------------------------------------------------------------------


def test_dense_scores_are_cosines_and_keyword_only_hits_carry_their_vectors(index: VectorIndex) -> None:
    ms = [memory(SCOPE, str(i)) for i in range(6)]
    index.upsert(SCOPE, [item(m, i, (100 + i,)) for i, m in enumerate(ms)])
    query = unit(3)
    hits = index.hybrid_search(SCOPE, dense=query * 5.0, sparse=None, limit=4, where=ALL, with_vectors=True)
    assert hits.dense[0].memory.id == ms[3].id
    assert len(hits.dense) == 4 and hits.sparse == []
    expected = {m.id: float(unit(i) @ query) for i, m in enumerate(ms)}
    for c in hits.dense:
        assert c.score == pytest.approx(expected[c.memory.id], abs=1e-5)
        assert c.vector is None  # its score is its cosine
    assert [c.score for c in hits.dense] == sorted((c.score for c in hits.dense), reverse=True)
    # the keyword retriever finds records 0 and 5; the dense one (limit 2) record 3 and at most one of them
    both = index.hybrid_search(SCOPE, dense=query, sparse=SparseVector([100, 105], [1.0, 1.0]),
                               limit=2, where=ALL, with_vectors=True)
    dense_ids = {c.memory.id for c in both.dense}
    keyword_only = [c for c in both.sparse if c.memory.id not in dense_ids]
    assert keyword_only and all(c.vector is None for c in both.sparse if c.memory.id in dense_ids)
    for c in keyword_only:
        assert c.vector is not None and c.vector.shape == (DIM,)
        assert float(c.vector @ query) == pytest.approx(expected[c.memory.id], abs=1e-5)
    bare = index.hybrid_search(SCOPE, dense=query, sparse=SparseVector([100], [1.0]), limit=2, where=ALL)
    assert all(c.vector is None for c in [*bare.dense, *bare.sparse])


def test_sparse_finds_shared_tokens_only_with_idf_weighted_scores(index: VectorIndex) -> None:
    rare, common, none = memory(SCOPE, "rare"), memory(SCOPE, "common"), memory(SCOPE, "none")
    index.upsert(SCOPE, [item(rare, 1, (11, 2**31 - 1)), item(common, 2, (11,)), item(none, 3, (99,))])
    index.upsert(SCOPE, [item(memory(SCOPE, f"c{i}"), 10 + i, (11,)) for i in range(4)])
    _, sparse = search(index, SCOPE, 1, tokens=(11, 2**31 - 1))
    assert sparse[0] == rare.id  # the rare token lifts it above records sharing only the common one
    assert none.id not in sparse and common.id in sparse
    hits = index.hybrid_search(
        SCOPE,
        dense=unit(1),
        sparse=SparseVector([11, 2**31 - 1], [1.0, 1.0]),
        limit=10,
        where=ALL,
        with_vectors=True,
    )
    dense_ids = {c.memory.id for c in hits.dense}
    assert all(c.score > 0 for c in hits.sparse)
    assert all((c.vector is None) == (c.memory.id in dense_ids) for c in hits.sparse)
    empty = index.hybrid_search(SCOPE, dense=unit(1), sparse=SparseVector([], []), limit=5, where=ALL)
    assert empty.sparse == [] and len(empty.dense) == 5


def test_filters_narrow_search_scroll_and_count(index: VectorIndex) -> None:
    recs = {
        "fact": memory(SCOPE, "fact"),
        "episode": memory(SCOPE, "episode", kind=Kind.EPISODE, category="appel"),
        "old": memory(SCOPE, "old", status=Status.SUPERSEDED),
        "expired": memory(SCOPE, "expired", expires_at=NOW - timedelta(seconds=1)),
        "later": memory(SCOPE, "later", expires_at=NOW + timedelta(seconds=1)),
    }
    index.upsert(SCOPE, [item(m, i, (5,)) for i, m in enumerate(recs.values())])
    cases: list[tuple[RecordFilter, set[str]]] = [
        (RecordFilter(), {"fact", "episode", "expired", "later"}),
        (ALL, set(recs)),
        (RecordFilter(statuses=()), set()),
        (RecordFilter(statuses=(Status.SUPERSEDED,)), {"old"}),
        (RecordFilter(kinds=(Kind.EPISODE, Kind.PROCEDURE), statuses=None), {"episode"}),
        (RecordFilter(category="appel"), {"episode"}),
        (RecordFilter(not_expired_at=NOW), {"fact", "episode", "later"}),
        (RecordFilter(statuses=None, not_expired_at=NOW + timedelta(seconds=1)), {"fact", "episode", "old"}),
    ]
    for where, keys in cases:
        want = {recs[k].id for k in keys}
        dense, sparse = search(index, SCOPE, 0, tokens=(5,), where=where)
        assert set(dense) == want and set(sparse) == want, where
        assert {m.id for m in scroll_all(index, SCOPE, where)} == want, where
        assert index.count(SCOPE, where=where) == len(want), where


def test_scroll_pages_are_deterministic_and_complete(index: VectorIndex) -> None:
    ms = [memory(SCOPE, str(i)) for i in range(25)]
    index.upsert(SCOPE, [item(m, i) for i, m in enumerate(ms)])
    first = scroll_all(index, SCOPE, limit=10)
    assert [m.id for m in first] == sorted(m.id for m in ms)
    assert scroll_all(index, SCOPE, limit=10) == first
    page, cursor = index.scroll(SCOPE, where=ALL, limit=10)
    assert len(page) == 10 and cursor == first[10].id
    page, cursor = index.scroll(SCOPE, where=ALL, limit=10, offset=cursor)
    assert page == first[10:20]
    assert index.scroll(SCOPE, where=ALL, limit=25)[1] is None
    with pytest.raises(InvalidInput):
        index.scroll(SCOPE, where=ALL, limit=10, offset="'; DROP")


def test_newest_is_chosen_among_every_match_not_the_first_page(index: VectorIndex) -> None:
    """Ids are random with respect to time: the newest of 40 records are not the first by id."""
    ms = [memory(SCOPE, f"n{i}", valid_from=NOW - timedelta(days=i)) for i in range(40)]
    ms.append(memory(SCOPE, "newest-but-superseded", valid_from=NOW + timedelta(days=1), status=Status.SUPERSEDED))
    index.upsert(SCOPE, [item(m, i) for i, m in enumerate(ms)])
    got = index.newest(SCOPE, where=RecordFilter(), limit=5)
    assert [m.id for m in got] == [m.id for m in ms[:5]]  # active only, the latest valid_from first
    assert got[0].valid_from == NOW and all(a.valid_from > b.valid_from for a, b in pairwise(got))
    assert [m.id for m in index.newest(SCOPE, where=ALL, limit=1)] == [ms[-1].id]
    assert index.newest(SCOPE, where=RecordFilter(statuses=()), limit=5) == []


# -- updates in place ------------------------------------------------------------------------------


def test_record_access_adds_up_and_never_moves_time_back(index: VectorIndex) -> None:
    a, b = memory(SCOPE, "a"), memory(SCOPE, "b", access_count=5, last_accessed_at=NOW + timedelta(hours=1))
    index.upsert(SCOPE, [item(a, 1), item(b, 2)])
    later = NOW + timedelta(minutes=5)
    index.record_access(
        SCOPE,
        [
            AccessUpdate(a.id, 2, later),
            AccessUpdate(a.id, 1, NOW),
            AccessUpdate(b.id, 1, later),
            AccessUpdate(point_id(SCOPE, "gone"), 1, later),
        ],
    )
    got = {m.id: m for m in index.get(SCOPE, [a.id, b.id])}
    assert (got[a.id].access_count, got[a.id].last_accessed_at) == (3, later)
    assert (got[b.id].access_count, got[b.id].last_accessed_at) == (6, b.last_accessed_at)
    assert got[a.id].text == a.text and index.count(SCOPE, where=ALL) == 2
    assert search(index, SCOPE, 1, limit=1)[0] == [a.id]  # vectors untouched


def test_replace_payload_keeps_vectors_and_never_recreates(index: VectorIndex) -> None:
    a, b = memory(SCOPE, "a"), memory(SCOPE, "b")
    index.upsert(SCOPE, [item(a, 1, (3,)), item(b, 2)])
    changed = a.superseded(by=b.id, at=NOW + timedelta(days=1))
    index.replace_payload(SCOPE, [changed])
    assert index.get(SCOPE, [a.id]) == [changed]
    dense, sparse = search(index, SCOPE, 1, tokens=(3,), limit=1)
    assert dense == [a.id] and sparse == [a.id]
    assert search(index, SCOPE, 1, where=RecordFilter())[0] == [b.id]  # superseded is filtered out
    index.delete(SCOPE, [b.id])
    index.replace_payload(SCOPE, [b])
    assert index.get(SCOPE, [b.id]) == [] and index.count(SCOPE, where=ALL) == 1


# -- isolation -------------------------------------------------------------------------------------

Pair = tuple[Scope, Scope, list[Memory], list[Memory]]
PAIRS = {
    "same subject hash in two tenants": (Scope("assur-nord", "h-same"), Scope("banque-sud", "h-same")),
    "two subjects of one tenant": (Scope("assur-nord", "h-1"), Scope("assur-nord", "h-2")),
}


@pytest.fixture(params=list(PAIRS), ids=list(PAIRS))
def two_scopes(request: pytest.FixtureRequest, index: VectorIndex) -> Pair:
    """Scope ``mine`` and ``theirs`` with records on the very same vectors and tokens."""
    mine, theirs = PAIRS[request.param]
    own = [memory(mine, f"k{i}") for i in range(3)]
    other = [memory(theirs, f"k{i}") for i in range(3)]
    index.upsert(mine, [item(m, i) for i, m in enumerate(own)])
    index.upsert(theirs, [item(m, i) for i, m in enumerate(other)])
    return mine, theirs, own, other


def ids(ms: list[Memory]) -> set[str]:
    return {m.id for m in ms}


def test_search_never_crosses_scopes(index: VectorIndex, two_scopes: Pair) -> None:
    mine, theirs, own, other = two_scopes
    for seed in range(3):
        dense, sparse = search(index, mine, seed)
        assert set(dense) == set(sparse) == ids(own)
        dense, sparse = search(index, theirs, seed)
        assert set(dense) == set(sparse) == ids(other)


def test_reads_never_cross_scopes(index: VectorIndex, two_scopes: Pair) -> None:
    mine, theirs, own, other = two_scopes
    assert index.get(mine, [m.id for m in other]) == []
    assert ids(index.get(mine, [m.id for m in own + other])) == ids(own)
    assert ids(scroll_all(index, mine, limit=2)) == ids(own)
    assert all(m.scope == mine for m in scroll_all(index, mine))
    assert index.count(mine, where=ALL) == len(own)
    assert index.count(theirs, where=ALL) == len(other)
    assert ids(index.newest(mine, where=ALL, limit=100)) == ids(own)


def test_writes_never_cross_scopes(index: VectorIndex, two_scopes: Pair) -> None:
    mine, theirs, own, other = two_scopes
    before = index.get(theirs, [m.id for m in other])
    index.delete(mine, [m.id for m in other])
    index.record_access(mine, [AccessUpdate(m.id, 1, NOW) for m in other])
    index.replace_payload(mine, [replace(own[0], id=other[0].id, text="enc:hijack")])
    with pytest.raises(Conflict):
        index.upsert(mine, [item(replace(own[0], id=other[1].id, text="enc:hijack"), 9)])
    assert index.get(theirs, [m.id for m in other]) == before
    assert index.count(mine, where=ALL) == len(own)
    index.delete(mine, [m.id for m in own])
    assert index.count(mine, where=ALL) == 0 and index.count(theirs, where=ALL) == len(other)


def test_sparse_scores_depend_on_the_scope_only(index: VectorIndex) -> None:
    mine, theirs = Scope("assur-nord", "h-1"), Scope("banque-sud", "h-1")
    index.upsert(mine, [item(memory(mine, "a"), 1, (42,)), item(memory(mine, "b"), 2, (43,))])
    query = SparseVector([42], [1.0])
    before = index.hybrid_search(mine, dense=unit(1), sparse=query, limit=5, where=ALL).sparse[0].score
    index.upsert(theirs, [item(memory(theirs, f"x{i}"), i, (42,)) for i in range(20)])
    after = index.hybrid_search(mine, dense=unit(1), sparse=query, limit=5, where=ALL).sparse[0].score
    assert after == pytest.approx(before)


# -- the embedded shard ----------------------------------------------------------------------------


def test_a_second_edge_index_on_the_same_path_is_refused(shard_path: Path) -> None:
    path = shard_path
    first = EdgeVectorIndex(path, DIM)
    try:
        with pytest.raises(StoreLocked, match=r"held by another process \(is `carnet serve` running\?\)") as err:
            EdgeVectorIndex(path, DIM)
        assert str(path) in err.value.message
        probe = (
            "import sys, pathlib; from carnet.adapters.vectors.qdrant_edge import EdgeVectorIndex;"
            " EdgeVectorIndex(pathlib.Path(sys.argv[1]), 16)"
        )
        other = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True, timeout=60)
        assert other.returncode != 0 and "StoreLocked" in other.stderr
    finally:
        first.close()
    EdgeVectorIndex(path, DIM).close()  # released by close


def test_edge_data_persists_across_close_and_reopen(shard_path: Path) -> None:
    path = shard_path
    ms = [memory(SCOPE, str(i)) for i in range(5)]
    first = EdgeVectorIndex(path, DIM)
    first.upsert(SCOPE, [item(m, i) for i, m in enumerate(ms)])
    first.record_access(SCOPE, [AccessUpdate(ms[0].id, 1, NOW)])
    first.close()
    first.close()  # idempotent
    with pytest.raises(DependencyUnavailable):
        first.check()
    again = EdgeVectorIndex(path, DIM)
    try:
        again.check()
        assert ids(again.get(SCOPE, [m.id for m in ms])) == ids(ms)
        assert again.get(SCOPE, [ms[0].id])[0].access_count == 1
        dense, sparse = search(again, SCOPE, 4, limit=5)
        assert dense[0] == ms[4].id and set(sparse) == ids(ms)
        assert again.count(SCOPE, where=RecordFilter(not_expired_at=NOW)) == 5
    finally:
        again.close()


def test_a_shard_made_before_the_valid_from_index_gets_it_when_opened(shard_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    ms = [memory(SCOPE, str(i), valid_from=NOW - timedelta(days=i)) for i in range(6)]
    with monkeypatch.context() as old_layout:
        old_layout.setattr(pl, "FLOAT_INDEXES", (pl.EXPIRES_AT,))
        first = EdgeVectorIndex(shard_path, DIM)
        first.upsert(SCOPE, [item(m, i) for i, m in enumerate(ms)])
        first.close()
    again = EdgeVectorIndex(shard_path, DIM)
    try:
        assert [m.id for m in again.newest(SCOPE, where=ALL, limit=2)] == [ms[0].id, ms[1].id]
    finally:
        again.close()


def test_edge_refuses_a_shard_of_another_dimension(shard_path: Path) -> None:
    EdgeVectorIndex(shard_path, DIM).close()
    with pytest.raises(DependencyUnavailable, match="vector size"):
        EdgeVectorIndex(shard_path, DIM * 2)
    EdgeVectorIndex(shard_path, DIM).close()  # the failed open released the lock


def test_edge_calls_after_close_are_unavailable(shard_path: Path) -> None:
    idx = EdgeVectorIndex(shard_path, DIM)
    idx.close()
    with pytest.raises(DependencyUnavailable):
        idx.count(SCOPE, where=ALL)


def test_edge_serves_concurrent_reads_and_writes(shard_path: Path) -> None:
    idx = EdgeVectorIndex(shard_path, DIM)
    scopes = [Scope("t", f"h-{i}") for i in range(4)]

    def work(n: int) -> int:
        scope = scopes[n % 4]
        if n % 3 == 0:
            idx.upsert(scope, [item(memory(scope, str(n)), n)])
            return 0
        return len(search(idx, scope, n)[0])

    try:
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(work, range(300)))
        assert sum(idx.count(s, where=ALL) for s in scopes) == 100
    finally:
        idx.close()


# -- the server adapter ----------------------------------------------------------------------------


def test_server_reopens_an_existing_collection_and_checks_its_dimension(tmp_path: Path) -> None:
    client = QdrantClient(path=str(tmp_path / "local"))
    try:
        first = open_server(client)
        first.upsert(SCOPE, [item(memory(SCOPE, "a"), 1)])
        again = open_server(client)
        assert again.count(SCOPE, where=ALL) == 1
        again.check()
        with pytest.raises(ValueError, match=r"holds 16-dim .* gives 32"):
            open_server(client, dim=DIM * 2)
    finally:
        client.close()


def test_server_check_fails_when_the_collection_is_gone() -> None:
    client = QdrantClient(":memory:")
    idx = open_server(client)
    client.delete_collection("memories")
    with pytest.raises(DependencyUnavailable, match="missing"):
        idx.check()
    idx.close()


def test_rest_reopens_an_existing_collection_and_checks_its_dimension(qdrant_rest: RunningQdrant) -> None:
    name = f"reopen-{uuid4().hex}"
    first = open_rest(qdrant_rest, name)
    try:
        first.upsert(SCOPE, [item(memory(SCOPE, "a"), 1)])
        again = open_rest(qdrant_rest, name)  # a second process: the collection and its indexes exist
        assert again.count(SCOPE, where=ALL) == 1
        again.check()
        again.close()
        with pytest.raises(ValueError, match=r"holds 16-dim .* gives 32"):
            open_rest(qdrant_rest, name, dim=DIM * 2)
        drop(qdrant_rest, name)
        with pytest.raises(DependencyUnavailable, match="missing"):
            first.check()
    finally:
        first.close()
        drop(qdrant_rest, name)


def test_connect_refuses_an_api_key_over_plain_http() -> None:
    with pytest.raises(ValueError, match="plain HTTP"):
        connect(url="http://qdrant:6333", api_key="k", ca_cert=None, collection="c", dim=DIM)


# -- moving a subject (rehash) -----------------------------------------------------------------------


def test_rescope_moves_records_keeping_dense_vectors_and_taking_new_sparse(index: VectorIndex) -> None:
    new = Scope(tenant=SCOPE.tenant, subject="h-new")
    a, b = memory(SCOPE, "a"), memory(SCOPE, "b")
    index.upsert(SCOPE, [item(a, 1, (7,)), item(b, 2, (7,))])
    moved = [(replace(a, scope=new, text="enc:a2"), SparseVector([9], [1.0])),
             (replace(b, scope=new, text="enc:b2"), SparseVector([9], [1.0])),
             (replace(memory(SCOPE, "gone"), scope=new), SparseVector([9], [1.0]))]  # not stored: skipped
    index.rescope(SCOPE, new, moved)
    assert scroll_all(index, SCOPE) == []
    assert sorted(m.text for m in scroll_all(index, new)) == ["enc:a2", "enc:b2"]
    hits = index.hybrid_search(new, dense=unit(1), sparse=SparseVector([9], [1.0]), limit=5, where=ALL)
    assert hits.dense[0].memory.id == a.id and hits.dense[0].score == pytest.approx(1.0, abs=1e-5)
    assert sorted(c.memory.id for c in hits.sparse) == sorted([a.id, b.id])  # the new tokens are indexed
    assert search(index, new, 1, tokens=(7,))[1] == []  # the old ones are gone


def test_rescope_refuses_records_of_another_subject(index: VectorIndex) -> None:
    other = Scope(tenant=SCOPE.tenant, subject="h-other")
    new = Scope(tenant=SCOPE.tenant, subject="h-new")
    theirs = memory(other, "x")
    index.upsert(other, [item(theirs, 3)])
    with pytest.raises(Conflict):
        index.rescope(SCOPE, new, [(replace(theirs, scope=new), SparseVector([9], [1.0]))])
    assert [m.id for m in scroll_all(index, other)] == [theirs.id]
