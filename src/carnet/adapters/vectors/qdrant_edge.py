"""``VectorIndex`` on qdrant-edge: the Qdrant engine in-process, one on-disk shard, one owner process.

Layout: named dense vector ``dense`` (cosine) and named sparse vector ``sparse`` (IDF modifier; its
values are term frequencies under keyed token hashes). Keyword payload indexes on tenant (the tenant
key), subject, kind, status, category; a float index on ``expires_at``.

Choices, measured on 100k points / 1000 subjects / dim 384 on a 2-CPU host (``scripts/bench_edge_filter.py``):

- No global HNSW graph (``m=0``). Every query filters on one subject, so the engine's planner reads
  the subject's points from the payload index and scores them exactly; a global graph would never be
  used, yet building it makes ``optimize`` run ~60 s *holding the GIL* (it freezes the process).
- Sparse IDF statistics are computed over the subject's own records (``IdfParams(corpus=scope)``):
  nothing outside the scope influences a score, and it costs ~0.02 ms, where a tenant-wide corpus
  costs ~0.5 ms per query.
- The payload files are read once into the page cache when the shard opens, in a background thread
  (``edge_warm``): the engine leaves them cold and drops them from the cache on close, so every start
  otherwise pays a disk read per candidate's payload page (~4 ms an assemble at 1M records).
- Queries ask the engine for ids and scores only, then read the records of those ids in one scoped
  read (2.5–3.2 ms for a hybrid query's ~65 records against 3.8 ms reading 120 payloads with the
  hits), or take them from ``edge_cache`` when it keeps records (``cached``: this process owns the
  shard, so every write passes here and drops what it changed): 0.75 ms.
- No Python lock around engine calls: the engine synchronises internally (8 threads of mixed reads and
  writes, no error). Its Python bindings keep the interpreter lock for the whole of each call (no
  ``allow_threads`` in qdrant's ``lib/edge/python``): engine calls never overlap Python work in other
  threads (docs/benchmarks.md, "Questions through ONNX Runtime").

Engine failures (the engine raises bare ``Exception``) become ``DependencyUnavailable`` (``edge_engine``,
with the shard's configuration). Filters,
requests and hits are built in ``edge_requests``; the owner lock is ``edge_lock``'s. Records are
stored as given: sealing them is ``carnet.crypto.sealed_index``'s business.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from qdrant_edge import (
    CountRequest,
    Direction,
    EdgeShard,
    KeywordIndexParams,
    OrderBy,
    PayloadSchemaType,
    PayloadSelector,
    Point,
    QueryBatchRequest,
    ScrollRequest,
    UpdateOperation,
)

from carnet.adapters.vectors import payload as pl
from carnet.adapters.vectors.edge_cache import RecordCache
from carnet.adapters.vectors.edge_engine import config, engine_errors
from carnet.adapters.vectors.edge_lock import LOCK_FILE, held, lock, unlock
from carnet.adapters.vectors.edge_requests import (
    dense_request,
    scoped_filter,
    sparse_request,
    sparse_vector,
)
from carnet.adapters.vectors.edge_warm import Warmer
from carnet.adapters.vectors.hits import hit_ids, hybrid_hits
from carnet.domain.records import Memory, Scope
from carnet.domain.unreadable import Skipped
from carnet.errors import DependencyUnavailable
from carnet.fileio import copy_tree_sparse
from carnet.ports import (
    AccessUpdate,
    HybridHits,
    IndexedMemory,
    RecordFilter,
    SparseVector,
    Vector,
)

__all__ = ["EdgeVectorIndex", "held"]  # ``held`` (edge_lock): a restore takes the owner lock without the shard

CACHED_RECORDS = 100_000  # decoded records kept by default (Settings.record_cache_size): ~150 MB at most
_CONFIG_FILE = "edge_config.json"  # written by the engine: its presence means the shard exists
_ROUND_TRIP = timedelta(microseconds=1)  # a stored float time read back through datetime moves less


def _access_values(fields: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``Memory`` fields of ``payload.access_payloads``'s ``fields`` as ``from_payload`` reads them back;
    None if they do not (a damaged record's time past year 9999): written anyway, the records dropped."""
    last = fields[pl.LAST_ACCESSED_AT]
    try:
        at = None if last is None else pl.from_epoch(float(last))
    except ValueError:
        return None
    return {"access_count": int(fields[pl.ACCESS_COUNT]), "last_accessed_at": at}


class EdgeVectorIndex:
    """A qdrant-edge shard at ``path`` holding vectors of dimension ``dim``; this process owns it.
    ``cached``: how many decoded records ``edge_cache`` keeps at most (0: none; ``CARNET_RECORD_CACHE_SIZE``)."""

    def __init__(self, path: Path, dim: int, *, cached: int = CACHED_RECORDS) -> None:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._path = path
        self._dim = dim
        self._cache = RecordCache(cached)
        # Guards close(), optimize() and snapshot() from one another; the engine synchronises the rest.
        self._closing = threading.Lock()
        self._lock_fd: int | None = lock(path)
        try:
            self._shard = self._open(path, dim)
            self._ensure_indexes()
        except BaseException:
            self._release()
            raise
        # The payload files start cold in every process (the engine drops them from the page cache on
        # close): read them once in the background (``edge_warm``).
        self.warmer = Warmer(path)

    @staticmethod
    def _open(path: Path, dim: int) -> EdgeShard:
        """``EdgeShard.load(path, config)`` (checks the stored dim) or ``EdgeShard.create(path, config)``."""
        with engine_errors(f"opening the shard at {path}"):
            if (path / _CONFIG_FILE).exists():
                return EdgeShard.load(str(path), config(dim))
            return EdgeShard.create(str(path), config(dim))

    def _ensure_indexes(self) -> None:
        """``update(create_field_index)`` for each payload index the shard does not have yet."""
        with engine_errors("creating payload indexes"):
            present = set(self._shard.info().payload_schema)
            wanted: list[tuple[str, Any]] = [(pl.TENANT, KeywordIndexParams(is_tenant=True))]
            wanted += [(k, PayloadSchemaType.Keyword) for k in pl.KEYWORD_INDEXES]
            wanted += [(k, PayloadSchemaType.Float) for k in pl.FLOAT_INDEXES]
            for field, schema in wanted:
                if field not in present:
                    self._shard.update(UpdateOperation.create_field_index(field, schema))

    # -- writes -------------------------------------------------------------------------------

    def upsert(self, scope: Scope, items: Sequence[IndexedMemory]) -> None:
        """``update(upsert_points)``, conditioned on the scope, after refusing ids owned by another scope."""
        points = pl.new_points(scope, items, self._point, self._owners)
        if not points:
            return
        with self._changing(i.memory.id for i in items), engine_errors("upsert"):
            self._shard.update(UpdateOperation.upsert_points(points, condition=scoped_filter(scope)))

    def _point(self, item: IndexedMemory) -> Point:
        m = item.memory
        vector: dict[str, Any] = {pl.DENSE: pl.dense_values(item.dense, self._dim),
                                  pl.SPARSE: sparse_vector(item.sparse)}
        return Point(pl.check_point_id(m.id), vector, pl.to_payload(m))

    def _owners(self, ids: list[str]) -> Sequence[pl.Point]:
        """``retrieve(ids)`` with the owners' tenant and subject only (``pl.new_points`` checks them)."""
        with engine_errors("retrieve"):
            return self._shard.retrieve(list(ids), [pl.TENANT, pl.SUBJECT], False)

    def replace_payload(self, scope: Scope, memories: Sequence[Memory]) -> None:
        """``update(overwrite_payload_by_filter)`` per record, filtered by scope and id.

        Vectors are kept. A record no longer in the store (deleted meanwhile) is skipped, never recreated.
        """
        pl.check_scope(scope, memories)
        for m in memories:
            op = UpdateOperation.overwrite_payload_by_filter(
                scoped_filter(scope, ids=[pl.check_point_id(m.id)]), pl.to_payload(m)
            )
            with self._changing((m.id,)), engine_errors("overwrite payload"):
                self._shard.update(op)

    def rescope(self, old: Scope, new: Scope, items: Sequence[tuple[Memory, SparseVector]]) -> None:
        """``retrieve(ids, with dense vector)``, then ``update(upsert_points)`` conditioned on the old
        scope: the point keeps its id and dense vector and takes its new payload and sparse vector."""
        if not items:
            return
        pl.check_scope(new, (m for m, _ in items))
        ids: list[Any] = [pl.check_point_id(m.id) for m, _ in items]
        with engine_errors("retrieve"):
            existing = self._shard.retrieve(ids, [pl.TENANT, pl.SUBJECT], [pl.DENSE])
        found = ((str(r.id), r.payload, r.vector) for r in existing)
        points = [self._point(i) for i in pl.moved(old, items, found)]
        if points:
            with self._changing(ids), engine_errors("upsert"):
                self._shard.update(UpdateOperation.upsert_points(points, condition=scoped_filter(old)))

    def record_access(self, scope: Scope, updates: Sequence[AccessUpdate]) -> None:
        """Read the access fields (scoped ``scroll`` by ids, those two fields only) then one
        ``update(set_payload)`` per distinct new (count, time) among the records found
        (``payload.grouped_access``).

        The access fields of a record the cache keeps are taken from there (``_kept_access``), not read.
        Read-modify-write: the caller serialises calls for one scope (the subject's lock, which every
        write of the scope's records also takes). Ids not found in the scope are skipped, so each
        record written was just found by the scoped read: the write names it by its id alone, which
        costs the engine a third of a write by filter (21 against 56 µs a record here) for the same
        record (docs/benchmarks.md, "Load").
        """
        wanted = pl.point_ids([u.memory_id for u in updates])
        current = self._kept_access(scope, wanted, updates)
        records = self._by_ids(scope, [i for i in wanted if i not in current],
                               with_payload=PayloadSelector.Include(list(pl.ACCESS_FIELDS)))
        current.update(pl.access_states(records))
        for ids, fields in pl.grouped_access(pl.access_payloads(current, updates)):
            op = UpdateOperation.set_payload([*ids], fields)
            with self._changing(ids, _access_values(fields)), engine_errors("set payload"):
                self._shard.update(op)

    def _kept_access(self, scope: Scope, ids: Sequence[str],
                     updates: Sequence[AccessUpdate]) -> dict[str, pl.AccessState]:
        """The access state of the kept records among ``ids`` whose last access is more than a microsecond
        before every update's time: their new time is then the updates' own, whatever the round trip of
        the stored float through ``datetime`` moved the kept one (under a microsecond). The others are
        read from the engine. Under load that read was ~7 % of the server's CPU (docs/benchmarks.md,
        issue 49)."""
        earliest: dict[str, datetime] = {}
        for u in updates:
            earliest[u.memory_id] = min(earliest.get(u.memory_id, u.at), u.at)
        return {i: (count, None if last is None else pl.epoch(last))
                for i, (count, last) in self._cache.access(scope, ids).items()
                if last is None or last + _ROUND_TRIP < earliest[i]}

    def delete(self, scope: Scope, ids: Sequence[str]) -> None:
        """``update(delete_points_by_filter)`` on scope AND ids: an id of another scope is left alone."""
        wanted = [i for i in ids if pl.is_point_id(i)]
        if not wanted:
            return
        with self._changing(wanted), engine_errors("delete"):
            self._shard.update(UpdateOperation.delete_points_by_filter(scoped_filter(scope, ids=wanted)))

    @contextmanager
    def _changing(self, ids: Iterable[str], values: Mapping[str, Any] | None = None) -> Iterator[None]:
        """Around one engine write of ``ids``: afterwards the cache drops them (failed, or ``values`` not
        given), or sets on them the ``Memory`` fields the write set (``values``: applied)."""
        try:
            yield
        except BaseException:
            self._cache.changed(ids)
            raise
        if values is None:
            self._cache.changed(ids)
        else:
            self._cache.touched(ids, values)

    # -- reads --------------------------------------------------------------------------------

    def hybrid_search(self, scope: Scope, *, dense: Vector, sparse: SparseVector | None, limit: int,
                      where: RecordFilter, with_vectors: bool = False, skipped: Skipped | None = None) -> HybridHits:
        """One ``query_batch`` for ids and scores: nearest on ``dense`` (cosine) and, when given, on
        ``sparse`` (IDF dot); the vectors (``with_vectors``) are asked of the sparse half only
        (``hits.hybrid_hits``). The hits' records come from the cache or one scoped read; a hit whose
        payload does not decode is noted in ``skipped`` and left out."""
        if limit < 1:
            return HybridHits()
        flt = scoped_filter(scope, where)
        with_vector: Any = [pl.DENSE] if with_vectors else False
        requests = [dense_request(pl.dense_values(dense, self._dim), limit, flt, False)]
        if sparse is not None and sparse.indices:
            requests.append(sparse_request(scope, sparse, limit, flt, with_vector))
        with engine_errors("query"):
            results = self._shard.query_batch(QueryBatchRequest(requests))
        dense_hits, sparse_hits = results[0], results[1] if len(results) > 1 else None
        records = self._records(scope, hit_ids(dense_hits, sparse_hits), skipped, at_once=True)
        return hybrid_hits(dense_hits, sparse_hits, with_vectors=with_vectors, skipped=skipped, records=records)

    def _records(self, scope: Scope, ids: Sequence[str], skipped: Skipped | None,
                 at_once: bool = False) -> dict[str, Memory]:
        """The records of these point ids in ``scope``: cached, or read (scoped) and kept (``at_once``: a search's)."""
        def fetch(missing: list[str]) -> list[Memory]:
            return pl.decoded(self._by_ids(scope, missing, with_payload=True), skipped)
        return self._cache.records(scope, ids, fetch, keep_at_once=at_once)

    def get(self, scope: Scope, ids: Sequence[str], *, skipped: Skipped | None = None) -> list[Memory]:
        """The cached records of these ids whose scope is ``scope``, the others by ``scroll`` filtered by
        scope AND ids; in the order asked; unknown or malformed ids are absent, one whose payload does
        not decode is noted in ``skipped``."""
        wanted = pl.point_ids(ids)
        found = self._records(scope, wanted, skipped)
        return [found[i] for i in wanted if i in found]

    def _by_ids(self, scope: Scope, wanted: list[str], *, with_payload: bool | PayloadSelector) -> list[Any]:
        """``scroll`` filtered by scope AND ``wanted`` (point ids), with the payload asked."""
        if not wanted:
            return []
        request = ScrollRequest(limit=len(wanted), filter=scoped_filter(scope, ids=wanted), with_payload=with_payload)
        with engine_errors("scroll"):
            records, _ = self._shard.scroll(request)
        return list(records)

    def scroll(self, scope: Scope, *, where: RecordFilter, limit: int, offset: str | None = None,
               skipped: Skipped | None = None) -> tuple[list[Memory], str | None]:
        """``scroll`` by ascending point id; the cursor is the next page's first point id."""
        start = pl.parse_offset(offset)
        request = ScrollRequest(offset=start, limit=limit, filter=scoped_filter(scope, where), with_payload=True)
        with engine_errors("scroll"):
            records, nxt = self._shard.scroll(request)
        memories = pl.decoded(records, skipped)
        return memories, None if nxt is None else str(nxt)

    def newest(self, scope: Scope, *, where: RecordFilter, limit: int,
               skipped: Skipped | None = None) -> list[Memory]:
        """``scroll`` of ids ordered by ``valid_from``, descending (its float index), within the scope; the
        records from the cache or one scoped read."""
        request = ScrollRequest(limit=limit, filter=scoped_filter(scope, where), with_payload=False,
                                order_by=OrderBy(pl.VALID_FROM, Direction.Desc))
        with engine_errors("scroll"):
            points, _ = self._shard.scroll(request)
        ids = [str(p.id) for p in points]
        found = self._records(scope, ids, skipped, at_once=True)
        return [found[i] for i in ids if i in found]

    def count(self, scope: Scope, *, where: RecordFilter) -> int:
        """``count(exact=True)`` within the scope."""
        with engine_errors("count"):
            return int(self._shard.count(CountRequest(exact=True, filter=scoped_filter(scope, where))))

    # -- lifecycle ----------------------------------------------------------------------------

    def check(self) -> None:
        """``info()``: raises ``DependencyUnavailable`` when the shard is closed or broken."""
        if self._lock_fd is None:
            raise DependencyUnavailable("vector store is closed")
        with engine_errors("health check"):
            self._shard.info()

    def optimize(self) -> bool:
        """``optimize()``: merge segments and purge deleted points. Maintenance only.

        The engine holds the GIL for the whole run (seconds per 100k points with ``m=0``): the
        process answers nothing meanwhile. Run it at startup or from a maintenance command.
        """
        with self._closing, engine_errors("optimize"):
            return bool(self._shard.optimize())

    def snapshot(self, target: Path) -> int:
        """``flush()``, then the shard's files copied into the new directory ``target`` (holes kept, the
        lock file left out); returns the number of points.

        qdrant-edge can load a snapshot made by a Qdrant server but cannot make one, hence the copy.
        The caller stops every write first (a backup holds every subject lock): with no write and no
        optimisation running, the flushed segments and the write-ahead log on disk form a consistent
        shard. Reads go on meanwhile.
        """
        with self._closing:
            if self._lock_fd is None:
                raise DependencyUnavailable("vector store is closed")
            with engine_errors("flush"):
                self._shard.flush()
                points = int(self._shard.info().points_count)
            copy_tree_sparse(self._path, target, skip={LOCK_FILE})
        return points

    def compact(self) -> bool:
        """``optimize()`` then ``flush()``: segments holding any deleted point are rewritten without
        it (the shard is configured to vacuum at any deleted fraction, ``_config``), so a deleted
        record's sealed payload leaves the segment files. The write-ahead log keeps its copy until
        the engine recycles the log segment. ~1 s per 20k points rewritten, holding the GIL."""
        done = self.optimize()
        with engine_errors("flush"):
            self._shard.flush()
        return done

    def points_count(self) -> int:
        """``info().points_count``: every live point of the shard, all tenants. Maintenance only
        (``carnet reembed`` compares the old and new shards before switching)."""
        with engine_errors("info"):
            return int(self._shard.info().points_count)

    def close(self) -> None:
        """``flush()`` then ``close()``, then release the lock file. Idempotent and thread-safe.

        Calls racing with it fail with ``DependencyUnavailable`` (the engine answers "not initialized").
        """
        with self._closing:
            if self._lock_fd is None:
                return
            self.warmer.stop()
            self._cache.clear()
            try:
                with engine_errors("close"):
                    self._shard.flush()
                    self._shard.close()
            finally:
                self._release()

    def _release(self) -> None:
        if self._lock_fd is not None:
            unlock(self._lock_fd)
            self._lock_fd = None

