"""The Qdrant server's settings (``CARNET_QDRANT__*``, ``CARNET_VECTOR_BACKEND=server``): where it is,
how Carnet's collection is laid out on a cluster, and what each call asks of the replicas."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Self

from pydantic import BaseModel, Field, SecretStr, model_validator

from carnet.settings.tls import cert_pair


class WriteOrdering(StrEnum):
    """Qdrant's ``ordering`` of a write among the replicas of its shard."""

    WEAK = "weak"  # replicas apply writes in parallel, possibly in different orders (Qdrant's default)
    MEDIUM = "medium"  # through the shard's dynamically elected leader (available while a node is down)
    STRONG = "strong"  # through the shard's permanent leader (writes fail while that node is down)


class ReadConsistencyType(StrEnum):
    """Qdrant's named read ``consistency`` levels (or an integer: that many replicas)."""

    MAJORITY = "majority"
    QUORUM = "quorum"
    ALL = "all"


class QdrantSharding(StrEnum):
    """How the collection's points are spread over its shards (set when Carnet creates it)."""

    AUTO = "auto"  # Qdrant places points by id over CARNET_QDRANT__SHARD_NUMBER shards
    # Qdrant's tiered multitenancy (>= 1.16): custom sharding, small tenants in one fallback shard,
    # a tenant promoted by the operator in a shard of its own; every call names both.
    TIERED = "tiered"


class QdrantServerSettings(BaseModel):
    """The Qdrant server or cluster (``CARNET_VECTOR_BACKEND=server``).

    ``shard_number``, ``replication_factor`` and ``write_consistency_factor`` are used when Carnet
    creates the collection (unset: Qdrant's own defaults, one shard per node and one replica on one
    node); on a collection that exists they are compared and a difference is logged, never applied.
    ``write_ordering`` goes with every write, ``read_consistency`` with every read. ``sharding`` (with
    ``fallback_shard_key``) must match the collection's (docs/operations.md, "Qdrant cluster")."""

    url: str = "https://localhost:6333"
    api_key: SecretStr | None = None
    ca_cert: Path | None = None
    client_cert: Path | None = None  # mutual TLS (REST and gRPC), with its key below
    client_key: Path | None = None
    collection: str = "carnet_memories"
    prefer_grpc: bool = False
    shard_number: int | None = Field(None, ge=1, le=1024)
    replication_factor: int | None = Field(None, ge=1, le=64)
    write_consistency_factor: int | None = Field(None, ge=1, le=64)
    # medium: writes to one shard go through one replica, so every replica applies them in the same
    # order (a supersession writes two points, access counts read-modify-write), and stay possible
    # while a node is down; on one node it changes nothing.
    write_ordering: WriteOrdering = WriteOrdering.MEDIUM
    # 1: one replica answers. With write_consistency_factor = replication_factor an acknowledged write
    # is on every replica, so a read that follows sees it, and reads go on while a node is down.
    read_consistency: Annotated[int, Field(ge=1, le=64)] | ReadConsistencyType = 1
    sharding: QdrantSharding = QdrantSharding.AUTO
    fallback_shard_key: str = Field("default", min_length=1, max_length=255)  # small tenants' shard (tiered)

    @model_validator(mode="after")
    def _key_with_cert(self) -> Self:
        cert_pair(self.client_cert, self.client_key, "CARNET_QDRANT__")
        return self

    @model_validator(mode="after")
    def _write_factor_within_replicas(self) -> Self:
        """Qdrant refuses a write consistency factor above the replication factor (1 when unset)."""
        replicas = self.replication_factor or 1
        if self.write_consistency_factor is not None and self.write_consistency_factor > replicas:
            raise ValueError(
                f"CARNET_QDRANT__WRITE_CONSISTENCY_FACTOR ({self.write_consistency_factor}) cannot exceed "
                f"CARNET_QDRANT__REPLICATION_FACTOR ({replicas}{'' if self.replication_factor else ', unset'})"
            )
        return self

    @model_validator(mode="after")
    def _tiered_has_no_shard_number(self) -> Self:
        """Tiered: the fallback is one shard (Qdrant's limit) and a promotion creates the tenant's."""
        if self.sharding is QdrantSharding.TIERED and self.shard_number is not None:
            raise ValueError("CARNET_QDRANT__SHARDING=tiered keeps small tenants in one fallback shard and gives "
                             "a promoted tenant the shards its promotion creates: leave CARNET_QDRANT__SHARD_NUMBER "
                             "unset")
        return self
