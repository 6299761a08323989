"""Collections of the test server: one qdrant-edge shard per collection, in a directory of its own,
or with custom sharding (``sharding_method: custom``) one per shard key, each created by
``PUT /collections/{name}/shards``.

A collection's configuration is what ``PUT /collections/{name}`` asked for, applied to its shards
(``EdgeConfig``) and kept to answer ``GET /collections/{name}`` the way Qdrant reports it, with
Qdrant's defaults where the request was silent. A request's shard-key selector picks the shard as
Qdrant routes it: a key, or ``{target, fallback}`` (the target's shard if it exists, else the
fallback's: tiered multitenancy).

A persistent store (the test server in its own process, which the soak restarts) also writes each
collection's create request, payload indexes and shard keys to ``<name>/collection.json`` and reopens
its shards from disk when it starts again; the test suite's in-thread server keeps nothing.
"""

from __future__ import annotations

import itertools
import json
import re
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pydantic
import qdrant_edge as edge
from qdrant_client.http import models as m

from carnet.bench.topology.qdrant_rest.convert import NotReproduced

# Qdrant's rule for collection names (1 to 255 characters, none of these); "." and ".." are
# refused here too, as they are not a directory of their own.
_FORBIDDEN = re.compile(r'[<>:"/\\|?*\x00]')

# Qdrant's defaults for what a create request may leave out (config/config.yaml).
_HNSW = m.HnswConfig(m=16, ef_construct=100, full_scan_threshold=10_000, max_indexing_threads=0, on_disk=False)
_OPTIMIZERS = m.OptimizersConfig(deleted_threshold=0.2, vacuum_min_vector_number=1000, default_segment_number=0,
                                 flush_interval_sec=5)
_WAL = m.WalConfig(wal_capacity_mb=32, wal_segments_ahead=0)
_FIELD_SCHEMA: pydantic.TypeAdapter[m.PayloadFieldSchema] = pydantic.TypeAdapter(m.PayloadFieldSchema)
_SCHEMA_TYPES = {getattr(edge.PayloadSchemaType, t.value.capitalize()): t for t in m.PayloadSchemaType}


class CollectionNotFound(Exception):
    def __init__(self, name: str) -> None:
        super().__init__(f"Not found: Collection `{name}` doesn't exist!")


class CollectionExists(Exception):
    def __init__(self, name: str) -> None:
        super().__init__(f"Wrong input: Collection `{name}` already exists!")


class BadName(ValueError):
    def __init__(self, name: str) -> None:
        super().__init__(f"Validation error in path parameters: [name: collection name {name!r} is not allowed]")


ShardKey = int | str


@dataclass
class Collection:
    """``shards``: ``{None: shard}`` with automatic sharding, ``{key: shard}`` with custom sharding."""

    path: Path
    edge_config: edge.EdgeConfig
    config: m.CollectionConfig
    shards: dict[ShardKey | None, edge.EdgeShard]
    index_params: dict[str, m.PayloadFieldSchema] = field(default_factory=dict)
    selectors: list[m.ShardKeySelector | None] = field(default_factory=list)  # of every routed request
    body: m.CreateCollection | None = None  # what created it: kept on disk by a persistent store
    persist: bool = False
    _ops: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    lock: threading.Lock = field(default_factory=threading.Lock)  # shards, indexes and their file

    @property
    def custom(self) -> bool:
        return self.config.params.sharding_method is m.ShardingMethod.CUSTOM

    def next_operation(self) -> int:
        return next(self._ops)

    def route(self, selector: m.ShardKeySelector | None, *, write: bool) -> edge.EdgeShard:
        """The shard a request goes to. ``{target, fallback}``: the target's shard if it exists, else
        the fallback's. A read without a key on custom sharding (every shard) is not reproduced."""
        with self.lock:
            self.selectors.append(selector)
            if not self.custom:
                if selector is not None:
                    raise ValueError("Shard key selector is only allowed for collections with custom sharding")
                return self.shards[None]
            if selector is None:
                if write:
                    raise ValueError("Shard key not specified: the collection uses custom sharding")
                raise NotReproduced("a read across every shard key")
            if isinstance(selector, m.ShardKeyWithFallback):
                chosen = self.shards.get(selector.target) or self.shards.get(selector.fallback)
                if chosen is None:
                    raise ValueError(f"Shard key {selector.fallback} not found")
                return chosen
            if isinstance(selector, list):
                raise NotReproduced("several shard keys in one request")
            if selector not in self.shards:
                raise ValueError(f"Shard key {selector} not found")
            return self.shards[selector]

    def add_shard_key(self, body: m.CreateShardingKey) -> None:
        """A new engine shard for ``body.shard_key``, with the payload indexes created so far."""
        if not self.custom:
            raise ValueError("Shard keys can only be created for collections with custom sharding")
        if body.shards_number not in (None, 1) or body.placement:
            raise NotReproduced("several shards per key, placement")
        if body.initial_state not in (None, m.ReplicaState.ACTIVE):
            raise NotReproduced("shard states other than active (a promotion's partial shard, replicate_points)")
        with self.lock:
            if body.shard_key in self.shards:
                raise ValueError(f"Shard key {body.shard_key} already exists")
            shard = edge.EdgeShard.create(str(self.path / f"key-{len(self.shards)}"), self.edge_config)
            for key, schema in self.index_params.items():
                shard.update(edge.UpdateOperation.create_field_index(key, _index_schema(schema)))
            self.shards[body.shard_key] = shard
            self.save()

    def read_shards(self, selector: m.ShardKeySelector | None) -> list[edge.EdgeShard]:
        """Where a retrieve by id looks: without a key on custom sharding, every shard (as Qdrant)."""
        if self.custom and selector is None:
            with self.lock:
                self.selectors.append(None)
            return self.all_shards()
        return [self.route(selector, write=False)]

    def shard_keys(self) -> list[ShardKey]:
        with self.lock:
            return [k for k in self.shards if k is not None]

    def all_shards(self) -> list[edge.EdgeShard]:
        with self.lock:
            return list(self.shards.values())

    def info(self) -> m.CollectionInfo:
        """``shard.info()`` of every shard: counts summed, payload indexes as the engine has them."""
        states = [shard.info() for shard in self.all_shards()]
        schema = {key: m.PayloadIndexInfo(data_type=_SCHEMA_TYPES[index.data_type],
                                          params=_params_of(self.index_params.get(key)),
                                          points=sum(st.payload_schema[key].points for st in states
                                                     if key in st.payload_schema))
                  for st in states for key, index in st.payload_schema.items()}
        return m.CollectionInfo(status=m.CollectionStatus.GREEN, optimizer_status="ok",
                                segments_count=sum(st.segments_count for st in states),
                                points_count=sum(st.points_count for st in states),
                                indexed_vectors_count=sum(st.indexed_vectors_count for st in states),
                                config=self.config, payload_schema=schema)

    def close(self) -> None:
        for shard in self.all_shards():
            shard.close()

    def save(self) -> None:
        """``collection.json``: enough to reopen the shards (request, indexes, shard keys in order).
        Called with ``lock`` held, or before the collection is shared."""
        if not self.persist or self.body is None:
            return
        saved = {"body": self.body.model_dump(mode="json", exclude_none=True),
                 "indexes": {k: _FIELD_SCHEMA.dump_python(v, mode="json", exclude_none=True)
                             for k, v in self.index_params.items()},
                 "shard_keys": [k for k in self.shards if k is not None]}
        temporary = self.path / "collection.json.tmp"
        temporary.write_text(json.dumps(saved))
        temporary.replace(self.path / "collection.json")


def _reopen(path: Path) -> Collection:
    """A persistent store's collection from its ``collection.json`` and shards (``EdgeShard.load``)."""
    saved = json.loads((path / "collection.json").read_text())
    body = m.CreateCollection.model_validate(saved["body"])
    config = _collection_config(body)
    edge_config = _edge_config(body, config)
    shards: dict[ShardKey | None, edge.EdgeShard] = {}
    if config.params.sharding_method is not m.ShardingMethod.CUSTOM:
        shards[None] = edge.EdgeShard.load(str(path / "shard"), edge_config)
    for n, key in enumerate(saved["shard_keys"]):
        shards[key] = edge.EdgeShard.load(str(path / f"key-{n}"), edge_config)
    indexes = {k: _FIELD_SCHEMA.validate_python(v) for k, v in saved["indexes"].items()}
    return Collection(path=path, edge_config=edge_config, config=config, shards=shards, index_params=indexes,
                      body=body, persist=True)


def _params_of(schema: m.PayloadFieldSchema | None) -> m.PayloadSchemaParams | None:
    return None if schema is None or isinstance(schema, m.PayloadSchemaType) else schema


class Store:
    """The collections under ``root``; creating and dropping are serialised, the rest is the engine's."""

    def __init__(self, root: Path, *, persist: bool = False) -> None:
        self._root = root
        self._persist = persist
        self._lock = threading.Lock()
        self._collections: dict[str, Collection] = {}
        if persist:
            for saved in sorted(root.glob("*/collection.json")):
                self._collections[saved.parent.name] = _reopen(saved.parent)

    def names(self) -> list[str]:
        with self._lock:
            return sorted(self._collections)

    def get(self, name: str) -> Collection:
        with self._lock:
            found = self._collections.get(name)
        if found is None:
            raise CollectionNotFound(name)
        return found

    def exists(self, name: str) -> bool:
        with self._lock:
            return name in self._collections

    def create(self, name: str, body: m.CreateCollection) -> None:
        """``EdgeShard.create`` in ``<root>/<name>``."""
        if not 1 <= len(name) <= 255 or _FORBIDDEN.search(name) or name in (".", ".."):
            raise BadName(name)
        config = _collection_config(body)
        with self._lock:
            if name in self._collections:
                raise CollectionExists(name)
            path = self._root / name
            shutil.rmtree(path, ignore_errors=True)
            path.mkdir(parents=True)
            edge_config = _edge_config(body, config)
            shards: dict[ShardKey | None, edge.EdgeShard] = {}
            if config.params.sharding_method is not m.ShardingMethod.CUSTOM:
                shards[None] = edge.EdgeShard.create(str(path / "shard"), edge_config)
            found = Collection(path=path, edge_config=edge_config, config=config, shards=shards, body=body,
                               persist=self._persist)
            found.save()
            self._collections[name] = found

    def delete(self, name: str) -> bool:
        """``close()`` and the shard's files removed; ``False`` when there was no such collection."""
        with self._lock:
            found = self._collections.pop(name, None)
        if found is None:
            return False
        found.close()
        shutil.rmtree(self._root / name, ignore_errors=True)
        return True

    def close(self) -> None:
        for name in self.names():
            self.delete(name)

    def release(self) -> None:
        """Close every shard and keep the files (a persistent store, before its process exits)."""
        with self._lock:
            found, self._collections = list(self._collections.values()), {}
        for collection in found:
            collection.close()

    def create_index(self, name: str, body: m.CreateFieldIndex) -> Collection:
        """``update(create_field_index)``; the parameters asked are reported by ``GET /collections``."""
        collection = self.get(name)
        if body.field_schema is None:
            raise NotReproduced("a payload index without field_schema (Qdrant infers it from the data)")
        with collection.lock:  # processes starting together ask for the same indexes at once
            collection.index_params[body.field_name] = body.field_schema
            for shard in collection.shards.values():
                shard.update(edge.UpdateOperation.create_field_index(body.field_name, _index_schema(body.field_schema)))
            collection.save()
        return collection


def _index_schema(schema: m.PayloadFieldSchema) -> Any:
    match schema:
        case m.PayloadSchemaType():
            return next(e for e, t in _SCHEMA_TYPES.items() if t is schema)
        case m.KeywordIndexParams():
            return edge.KeywordIndexParams(is_tenant=schema.is_tenant, on_disk=schema.on_disk,
                                           enable_hnsw=schema.enable_hnsw)
        case m.FloatIndexParams():
            return edge.FloatIndexParams(is_principal=schema.is_principal, on_disk=schema.on_disk,
                                         enable_hnsw=schema.enable_hnsw)
    raise NotReproduced(f"payload index parameters {type(schema).__name__}")


def _collection_config(body: m.CreateCollection) -> m.CollectionConfig:
    """What ``GET /collections/{name}`` reports: the request over Qdrant's defaults (one node: one
    shard, one replica). A shard number, replication factor and write consistency factor asked are
    reported as asked, though one qdrant-edge shard (per shard key) holds everything: recorded, not
    reproduced."""
    extras = ("quantization_config", "strict_mode_config", "wal_config", "payload", "id_tracker", "metadata")
    if any(getattr(body, name) is not None for name in extras):
        raise NotReproduced("quantization, strict mode, WAL, storage and metadata settings")
    if not isinstance(body.vectors, dict):
        raise NotReproduced("unnamed vectors: the server adapter names its vectors")
    hnsw = _HNSW.model_copy(update=body.hnsw_config.model_dump(exclude_none=True) if body.hnsw_config else {})
    optimizers = _OPTIMIZERS.model_copy(
        update=body.optimizers_config.model_dump(exclude_none=True) if body.optimizers_config else {})
    params = m.CollectionParams(vectors=body.vectors, sparse_vectors=body.sparse_vectors,
                                sharding_method=body.sharding_method, shard_number=body.shard_number or 1,
                                replication_factor=body.replication_factor or 1,
                                write_consistency_factor=body.write_consistency_factor or 1,
                                on_disk_payload=body.on_disk_payload if body.on_disk_payload is not None else True)
    return m.CollectionConfig(params=params, hnsw_config=hnsw, optimizer_config=optimizers, wal_config=_WAL)


def _edge_config(body: m.CreateCollection, config: m.CollectionConfig) -> edge.EdgeConfig:
    vectors = body.vectors if isinstance(body.vectors, dict) else {}
    hnsw, opt = config.hnsw_config, config.optimizer_config
    return edge.EdgeConfig(
        vectors={name: _dense(params) for name, params in vectors.items()},
        sparse_vectors={name: _sparse(params) for name, params in (body.sparse_vectors or {}).items()},
        on_disk_payload=config.params.on_disk_payload,
        hnsw_config=edge.HnswIndexConfig(m=hnsw.m, ef_construct=hnsw.ef_construct,
                                         full_scan_threshold=hnsw.full_scan_threshold, payload_m=hnsw.payload_m),
        optimizers=edge.EdgeOptimizersConfig(deleted_threshold=opt.deleted_threshold,
                                             vacuum_min_vector_number=opt.vacuum_min_vector_number,
                                             default_segment_number=opt.default_segment_number,
                                             max_segment_size=opt.max_segment_size,
                                             indexing_threshold=opt.indexing_threshold),
    )


def _dense(params: m.VectorParams) -> edge.EdgeVectorParams:
    if params.hnsw_config or params.quantization_config or params.multivector_config or params.datatype:
        raise NotReproduced("per-vector HNSW, quantization, multivectors and datatypes")
    return edge.EdgeVectorParams(size=params.size, distance=getattr(edge.Distance, params.distance.value),
                                 on_disk=params.on_disk)


def _sparse(params: m.SparseVectorParams) -> edge.EdgeSparseVectorParams:
    if params.index is not None:
        raise NotReproduced("sparse index parameters")
    modifier = params.modifier.value.capitalize() if params.modifier else "None"
    return edge.EdgeSparseVectorParams(modifier=getattr(edge.Modifier, modifier))
