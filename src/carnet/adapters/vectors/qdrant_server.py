"""``VectorIndex`` on a Qdrant server (production) through ``qdrant-client``, REST or gRPC, TLS + API key.

Same layout and semantics as ``carnet.adapters.vectors.qdrant_edge``: named vectors ``dense`` (cosine) and
``sparse`` (IDF), no global HNSW graph (``m=0``) but per-tenant graphs (``payload_m=16`` with the
tenant index ``is_tenant=True``, Qdrant's multitenancy layout), keyword indexes on subject, kind,
status, category (no graph links: ``enable_hnsw=False``) and a float index on ``expires_at``.
Sparse IDF statistics are computed over the subject's records (``IdfCorpusParams``), which needs
Qdrant >= 1.19; the constructor refuses older servers.

Writes wait for the server (``wait=True``) so a read that follows sees them. On a cluster
(``Distribution``) the collection is created with the shard number and the replication and write
consistency factors asked (an existing one is compared, a difference logged, never changed); writes
carry ``ordering``, reads but ``count`` ``consistency``, and with tiered multitenancy every call names
the tenant's shard key with the fallback's. Filters and hits: ``qdrant_requests``. Client and server
failures become ``DependencyUnavailable``."""

from __future__ import annotations

import ssl
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import grpc  # type: ignore[import-untyped]
import structlog
from qdrant_client import QdrantClient, models
from qdrant_client.http.exceptions import ApiException, UnexpectedResponse

from carnet.adapters.vectors import payload as pl
from carnet.adapters.vectors.hits import hybrid_hits
from carnet.adapters.vectors.qdrant_distribution import Distribution
from carnet.adapters.vectors.qdrant_requests import scoped_filter, sparse_request
from carnet.domain.records import Memory, Scope
from carnet.domain.unreadable import Skipped
from carnet.errors import DependencyUnavailable
from carnet.ports import (
    AccessUpdate,
    HybridHits,
    IndexedMemory,
    RecordFilter,
    SparseVector,
    Vector,
)

MIN_SERVER_VERSION = (1, 19)
log = structlog.get_logger(__name__)


@contextmanager
def _server_errors(what: str) -> Iterator[None]:
    """REST (``ApiException``: HTTP status or transport) and gRPC (``RpcError``) failures."""
    try:
        yield
    except (ApiException, grpc.RpcError) as exc:
        raise DependencyUnavailable(f"vector store: {what} failed: {exc}") from exc


def connect(
    *,
    url: str,
    api_key: str | None,
    ca_cert: Path | None,
    client_cert: tuple[Path, Path] | None = None,
    collection: str,
    dim: int,
    prefer_grpc: bool = False,
    timeout: int = 10,
    distribution: Distribution | None = None,
) -> ServerVectorIndex:
    """Build a ``QdrantClient`` (TLS verified against ``ca_cert`` when given, else the system store;
    ``client_cert`` is ``(cert, key)`` for mutual TLS, over REST and gRPC) and the index on it."""
    if api_key is not None and not url.startswith("https://"):
        raise ValueError("refusing to send the Qdrant API key over plain HTTP: use an https:// URL")
    tls: dict[str, Any] = {}
    grpc_options: dict[str, Any] | None = None
    if ca_cert is not None or client_cert is not None:
        context = ssl.create_default_context(cafile=str(ca_cert) if ca_cert is not None else None)
        grpc_options = {"root_certificates": ca_cert.read_bytes() if ca_cert is not None else None}
        if client_cert is not None:
            context.load_cert_chain(client_cert[0], client_cert[1])
            grpc_options |= {"certificate_chain": client_cert[0].read_bytes(),
                             "private_key": client_cert[1].read_bytes()}
        tls["verify"] = context
    client = QdrantClient(
        url=url,
        api_key=api_key,
        prefer_grpc=prefer_grpc,
        timeout=timeout,
        grpc_options=grpc_options,
        check_compatibility=False,
        **tls,
    )
    try:
        return ServerVectorIndex(client, collection, dim, distribution=distribution)
    except BaseException:
        client.close()
        raise


class ServerVectorIndex:
    """A collection ``collection`` of a Qdrant server, vectors of dimension ``dim``; created if missing,
    spread and replicated as ``distribution`` says (default: ``Distribution()``)."""

    def __init__(self, client: QdrantClient, collection: str, dim: int, *,
                 distribution: Distribution | None = None) -> None:
        self._client = client
        self._collection = collection
        self._dim = dim
        self._distribution = distribution if distribution is not None else Distribution()
        self._ordering = self._distribution.write_ordering()
        self._consistency = self._distribution.read_consistency()
        self._check_version()
        self._ensure_collection()
        self._ensure_indexes()

    def _check_version(self) -> None:
        """``GET /`` (``info``): per-subject IDF needs Qdrant >= 1.19."""
        with _server_errors("version check"):
            version = self._client.info().version
        parts = tuple(int(p) for p in version.split(".")[:2] if p.isdigit())
        if parts < MIN_SERVER_VERSION:
            raise DependencyUnavailable(f"Qdrant {version} is too old: Carnet needs 1.19 or later", version=version)

    def _ensure_collection(self) -> None:
        """``collection_exists`` then ``create_collection`` (with the shard number, sharding method,
        replication and write consistency factors), or ``get_collection`` to check the dim and the
        sharding method and compare the rest."""
        r = self._distribution
        with _server_errors("collection setup"):
            if not self._client.collection_exists(self._collection) and self._created():
                self._ensure_fallback_shard()
                return
            params = self._client.get_collection(self._collection).config.params
        dense = params.vectors.get(pl.DENSE) if isinstance(params.vectors, dict) else None
        found = "no" if dense is None else f"{dense.size}-dim"
        if dense is None or dense.size != self._dim:
            raise ValueError(
                f"collection {self._collection} holds {found} '{pl.DENSE}' vectors, the embedder gives {self._dim}"
            )
        r.check_sharding(self._collection, params)
        self._warn_if_distributed_otherwise(params)
        self._ensure_fallback_shard()

    def _created(self) -> bool:
        """``create_collection``: ``True`` when this process created it, ``False`` when another one did
        in between (pods starting together: Qdrant refuses the second creation), whose collection is
        then checked as any existing one."""
        r = self._distribution
        try:
            self._client.create_collection(
                self._collection,
                vectors_config={pl.DENSE: models.VectorParams(size=self._dim, distance=models.Distance.COSINE)},
                sparse_vectors_config={pl.SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
                hnsw_config=models.HnswConfigDiff(m=0, payload_m=16),
                shard_number=r.shard_number,
                sharding_method=models.ShardingMethod.CUSTOM if r.tiered else None,
                replication_factor=r.replication_factor,
                write_consistency_factor=r.write_consistency_factor,
            )
        except UnexpectedResponse:
            if not self._client.collection_exists(self._collection):
                raise
            return False
        return True

    def _ensure_fallback_shard(self) -> None:
        """Tiered: ``GET /collections/{name}/shards``, then ``PUT`` the fallback shard key if missing
        (one shard: Qdrant's limit for a fallback)."""
        r = self._distribution
        if not r.tiered:
            return
        with _server_errors("shard key setup"):
            keys = self._client.list_shard_keys(self._collection).shard_keys or []
            if r.fallback_shard_key not in {k.key for k in keys}:
                try:
                    self._client.create_shard_key(self._collection, r.fallback_shard_key, shards_number=1,
                                                  replication_factor=r.replication_factor)
                except UnexpectedResponse:  # another process created it in between: there it is, or raise
                    keys = self._client.list_shard_keys(self._collection).shard_keys or []
                    if r.fallback_shard_key not in {k.key for k in keys}:
                        raise

    def _warn_if_distributed_otherwise(self, params: models.CollectionParams) -> None:
        """An existing collection keeps its layout: changing it is the operator's move (docs/operations.md)."""
        for setting, (asked, found) in self._distribution.differences(params).items():
            log.warning("qdrant_collection_setting_differs", collection=self._collection, setting=setting,
                        configured=asked, collection_has=found)

    def _ensure_indexes(self) -> None:
        """``create_payload_index`` for each payload index the collection does not have yet."""
        wanted: dict[str, models.PayloadSchemaParams] = {
            pl.TENANT: models.KeywordIndexParams(type=models.KeywordIndexType.KEYWORD, is_tenant=True)
        }
        for key in pl.KEYWORD_INDEXES:
            wanted[key] = models.KeywordIndexParams(type=models.KeywordIndexType.KEYWORD, enable_hnsw=False)
        for key in pl.FLOAT_INDEXES:
            wanted[key] = models.FloatIndexParams(type=models.FloatIndexType.FLOAT, enable_hnsw=False)
        with _server_errors("payload index setup"):
            present = self._client.get_collection(self._collection).payload_schema
            for key, schema in wanted.items():
                if key not in present:
                    self._client.create_payload_index(self._collection, key, field_schema=schema, wait=True,
                                                      ordering=self._ordering)

    # -- writes -------------------------------------------------------------------------------

    def upsert(self, scope: Scope, items: Sequence[IndexedMemory]) -> None:
        """``PUT /points`` (``upsert``, ``update_filter`` = scope); ids owned by another scope are refused."""
        points = pl.new_points(scope, items, self._point, self._owners)
        if not points:
            return
        with _server_errors("upsert"):
            self._client.upsert(self._collection, points, wait=True, update_filter=scoped_filter(scope),
                                ordering=self._ordering, shard_key_selector=self._distribution.selector(scope))

    def _point(self, item: IndexedMemory) -> models.PointStruct:
        checked = pl.check_sparse(item.sparse)
        sparse = models.SparseVector(indices=list(checked.indices), values=list(checked.values))
        vector: dict[str, Any] = {pl.DENSE: pl.dense_values(item.dense, self._dim), pl.SPARSE: sparse}
        return models.PointStruct(
            id=pl.check_point_id(item.memory.id), vector=vector, payload=pl.to_payload(item.memory)
        )

    def _owners(self, ids: list[str]) -> Sequence[pl.Point]:
        """``POST /points`` (``retrieve``) with the owners' tenant and subject only (``pl.new_points`` checks
        them). No shard key, even on a tiered collection: Qdrant then looks in every shard, so an id taken
        in another tenant's shard is refused too."""
        with _server_errors("retrieve"):
            return self._client.retrieve(self._collection, ids, with_payload=[pl.TENANT, pl.SUBJECT],
                                         consistency=self._consistency)

    def rescope(self, old: Scope, new: Scope, items: Sequence[tuple[Memory, SparseVector]]) -> None:
        """``POST /points`` (``retrieve`` with the dense vector), then ``PUT /points`` (``upsert``,
        ``update_filter`` = the old scope): each point keeps its id and dense vector and takes its new
        payload and sparse vector."""
        if not items:
            return
        pl.check_scope(new, (m for m, _ in items))
        if self._distribution.tiered and old.tenant != new.tenant:
            raise ValueError("on a tiered collection records move within their tenant's shard only")
        ids = [pl.check_point_id(m.id) for m, _ in items]
        with _server_errors("retrieve"):
            existing = self._client.retrieve(self._collection, ids, with_payload=[pl.TENANT, pl.SUBJECT],
                                             with_vectors=[pl.DENSE], consistency=self._consistency,
                                             shard_key_selector=self._distribution.selector(old))
        found = ((str(r.id), r.payload, r.vector) for r in existing)
        points = [self._point(i) for i in pl.moved(old, items, found)]
        if points:
            with _server_errors("upsert"):
                self._client.upsert(self._collection, points, wait=True, update_filter=scoped_filter(old),
                                    ordering=self._ordering, shard_key_selector=self._distribution.selector(old))

    def replace_payload(self, scope: Scope, memories: Sequence[Memory]) -> None:
        """``POST /points/batch`` of ``overwrite_payload`` operations, each filtered by scope and id.

        Vectors are kept. A record no longer in the store (deleted meanwhile) is skipped, never recreated.
        """
        pl.check_scope(scope, memories)
        ops: list[models.UpdateOperation] = [
            models.OverwritePayloadOperation(
                overwrite_payload=models.SetPayload(
                    payload=pl.to_payload(m), filter=scoped_filter(scope, ids=[pl.check_point_id(m.id)]),
                    shard_key=self._distribution.selector(scope),
                )
            )
            for m in memories
        ]
        self._batch(ops, "overwrite payload")

    def record_access(self, scope: Scope, updates: Sequence[AccessUpdate]) -> None:
        """Read the access fields (scoped ``scroll`` by ids, those two fields only) then ``POST
        /points/batch`` of one ``set_payload`` per distinct new (count, time) (``payload.grouped_access``).

        Read-modify-write: the caller serialises calls for one scope. Ids not found are skipped.
        """
        current = pl.access_states(self._by_ids(scope, pl.point_ids([u.memory_id for u in updates]),
                                                with_payload=list(pl.ACCESS_FIELDS)))
        ops: list[models.UpdateOperation] = [
            models.SetPayloadOperation(
                set_payload=models.SetPayload(payload=fields, filter=scoped_filter(scope, ids=ids),
                                              shard_key=self._distribution.selector(scope))
            )
            for ids, fields in pl.grouped_access(pl.access_payloads(current, updates))
        ]
        self._batch(ops, "set payload")

    def _batch(self, ops: list[models.UpdateOperation], what: str) -> None:
        if not ops:
            return
        with _server_errors(what):
            self._client.batch_update_points(self._collection, ops, wait=True, ordering=self._ordering)

    def delete(self, scope: Scope, ids: Sequence[str]) -> None:
        """``POST /points/delete`` with a filter on scope AND ids: an id of another scope is left alone."""
        wanted = [i for i in ids if pl.is_point_id(i)]
        if not wanted:
            return
        selector = models.FilterSelector(filter=scoped_filter(scope, ids=wanted),
                                         shard_key=self._distribution.selector(scope))
        with _server_errors("delete"):
            self._client.delete(self._collection, selector, wait=True, ordering=self._ordering)

    # -- reads --------------------------------------------------------------------------------

    def hybrid_search(self, scope: Scope, *, dense: Vector, sparse: SparseVector | None, limit: int,
                      where: RecordFilter, with_vectors: bool = False, skipped: Skipped | None = None) -> HybridHits:
        """One ``POST /points/query/batch``: nearest on ``dense`` (cosine) and on ``sparse`` (IDF dot).
        A hit whose payload does not decode is noted in ``skipped`` and left out."""
        if limit < 1:
            return HybridHits()
        flt = scoped_filter(scope, where)
        with_vector: list[str] | bool = [pl.DENSE] if with_vectors else False
        shard_key = self._distribution.selector(scope)
        requests = [
            models.QueryRequest(
                query=models.NearestQuery(nearest=pl.dense_values(dense, self._dim)),
                using=pl.DENSE,
                filter=flt,
                limit=limit,
                with_payload=True,
                with_vector=False,  # a dense hit's score is its cosine: only keyword-only hits need theirs
                shard_key=shard_key,
            )
        ]
        if sparse is not None and sparse.indices:
            requests.append(sparse_request(scope, sparse, limit, flt, with_vector, shard_key))
        with _server_errors("query"):
            responses = self._client.query_batch_points(self._collection, requests, consistency=self._consistency)
        return hybrid_hits(responses[0].points, responses[1].points if len(responses) > 1 else None,
                           with_vectors=with_vectors, skipped=skipped)

    def get(self, scope: Scope, ids: Sequence[str], *, skipped: Skipped | None = None) -> list[Memory]:
        """``POST /points/scroll`` filtered by scope AND ids, in the order asked; unknown ids are absent,
        one whose payload does not decode is noted in ``skipped``."""
        wanted = pl.point_ids(ids)
        return pl.in_order(wanted, self._by_ids(scope, wanted, with_payload=True), skipped)

    def _by_ids(self, scope: Scope, wanted: list[str], *, with_payload: bool | list[str]) -> list[models.Record]:
        """``POST /points/scroll`` filtered by scope AND ``wanted`` (point ids), with the payload asked."""
        if not wanted:
            return []
        with _server_errors("scroll"):
            records, _ = self._client.scroll(
                self._collection,
                scroll_filter=scoped_filter(scope, ids=wanted),
                limit=len(wanted),
                with_payload=with_payload,
                consistency=self._consistency,
                shard_key_selector=self._distribution.selector(scope),
            )
        return records

    def scroll(self, scope: Scope, *, where: RecordFilter, limit: int, offset: str | None = None,
               skipped: Skipped | None = None) -> tuple[list[Memory], str | None]:
        """``POST /points/scroll`` by ascending point id; the cursor is the next page's first point id."""
        records, nxt = self._scroll(scope, where, limit, offset=pl.parse_offset(offset))
        return pl.decoded(records, skipped), None if nxt is None else str(nxt)

    def newest(self, scope: Scope, *, where: RecordFilter, limit: int,
               skipped: Skipped | None = None) -> list[Memory]:
        """``POST /points/scroll`` with ``order_by`` ``valid_from`` descending (its float index)."""
        order = models.OrderBy(key=pl.VALID_FROM, direction=models.Direction.DESC)
        return pl.decoded(self._scroll(scope, where, limit, order_by=order)[0], skipped)

    def _scroll(self, scope: Scope, where: RecordFilter, limit: int, **how: Any) -> tuple[list[Any], Any]:
        with _server_errors("scroll"):
            return self._client.scroll(self._collection, scroll_filter=scoped_filter(scope, where), limit=limit,
                                       with_payload=True, consistency=self._consistency,
                                       shard_key_selector=self._distribution.selector(scope), **how)

    def count(self, scope: Scope, *, where: RecordFilter) -> int:
        """``POST /points/count`` (exact) within the scope. Qdrant's count takes no read ``consistency``:
        it counts on one replica of each shard."""
        with _server_errors("count"):
            return self._client.count(self._collection, count_filter=scoped_filter(scope, where), exact=True,
                                      shard_key_selector=self._distribution.selector(scope)).count

    # -- lifecycle ----------------------------------------------------------------------------

    def check(self) -> None:
        """``GET /collections/{name}/exists``: ``DependencyUnavailable`` when unreachable or missing."""
        try:
            exists = self._client.collection_exists(self._collection)
        except Exception as exc:  # any failure to answer is "unavailable", and is re-raised as such
            raise DependencyUnavailable(f"vector store unreachable: {exc}") from exc
        if not exists:
            raise DependencyUnavailable(f"vector store collection {self._collection} is missing")

    def compact(self) -> bool:
        """Nothing to call: the server's own optimizers vacuum segments whose deleted fraction passes
        the collection's ``optimizers_config.deleted_threshold`` (0.2 by default; lower it on the
        collection for faster physical removal)."""
        return False

    def close(self) -> None:
        """``QdrantClient.close()``: closes HTTP connections / gRPC channels."""
        self._client.close()
