"""How Carnet's collection is spread over a Qdrant cluster, and what each call asks of its replicas.

``Distribution`` holds the ``CARNET_QDRANT__*`` layout settings as plain values and turns them into
qdrant-client's models: the shard number and the replication and write consistency factors given to
``create_collection``, ``ordering`` for every write, read ``consistency`` for every read, and with
tiered multitenancy (Qdrant >= 1.16) the shard-key selector of every call: the tenant's dedicated
shard if the operator promoted it, else the shared fallback shard (docs/operations.md, "Qdrant cluster").
"""

from __future__ import annotations

from dataclasses import dataclass

from qdrant_client import models

from carnet.domain.records import Scope


@dataclass(frozen=True)
class Distribution:
    """``None``: Qdrant's default when the collection is created (one shard per node, one replica).
    ``ordering``: ``weak``, ``medium`` or ``strong``; ``consistency``: a number of replicas, or
    ``majority``, ``quorum``, ``all``; ``tiered``: custom sharding with ``fallback_shard_key``.
    The defaults are those of ``CARNET_QDRANT__*``."""

    shard_number: int | None = None
    replication_factor: int | None = None
    write_consistency_factor: int | None = None
    ordering: str = "medium"
    consistency: int | str = 1
    tiered: bool = False
    fallback_shard_key: str = "default"

    def write_ordering(self) -> models.WriteOrdering:
        return models.WriteOrdering(self.ordering)

    def read_consistency(self) -> models.ReadConsistency:
        if isinstance(self.consistency, int):
            return self.consistency
        return models.ReadConsistencyType(self.consistency)

    def sharding_method(self) -> models.ShardingMethod:
        return models.ShardingMethod.CUSTOM if self.tiered else models.ShardingMethod.AUTO

    def selector(self, scope: Scope) -> models.ShardKeyWithFallback | None:
        """Tiered: the shard named after the tenant if it exists, else the fallback; auto: none."""
        if not self.tiered:
            return None
        return models.ShardKeyWithFallback(target=scope.tenant, fallback=self.fallback_shard_key)

    def differences(self, params: models.CollectionParams) -> dict[str, tuple[int | None, int | None]]:
        """The settings asked that the collection does not have: ``{name: (asked, found)}``."""
        asked = {"shard_number": self.shard_number, "replication_factor": self.replication_factor,
                 "write_consistency_factor": self.write_consistency_factor}
        return {name: (value, getattr(params, name)) for name, value in asked.items()
                if value is not None and value != getattr(params, name)}

    def check_sharding(self, collection: str, params: models.CollectionParams) -> None:
        """A collection sharded otherwise cannot be used: Qdrant refuses shard keys on automatic
        sharding and writes without one on custom sharding."""
        found = params.sharding_method or models.ShardingMethod.AUTO
        if found is not self.sharding_method():
            raise ValueError(
                f"collection {collection} uses {found.value} sharding, CARNET_QDRANT__SHARDING="
                f"{'tiered' if self.tiered else 'auto'} needs {self.sharding_method().value}"
            )
