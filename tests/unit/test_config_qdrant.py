"""CARNET_QDRANT__* for a cluster: shards, replication, write ordering and read consistency, and how
bootstrap hands them to the server adapter."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from carnet.adapters.vectors.qdrant_distribution import Distribution
from carnet.domain.records import Scope
from carnet.settings.qdrant import QdrantServerSettings, QdrantSharding, ReadConsistencyType, WriteOrdering
from carnet.settings.root import Settings


def test_defaults_leave_the_layout_to_qdrant_and_order_writes_through_a_leader() -> None:
    q = QdrantServerSettings()
    assert (q.shard_number, q.replication_factor, q.write_consistency_factor) == (None, None, None)
    assert q.write_ordering is WriteOrdering.MEDIUM and q.read_consistency == 1
    assert q.sharding is QdrantSharding.AUTO and q.fallback_shard_key == "default"


def test_cluster_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {"SHARD_NUMBER": "6", "REPLICATION_FACTOR": "2", "WRITE_CONSISTENCY_FACTOR": "2",
                        "WRITE_ORDERING": "strong", "READ_CONSISTENCY": "majority"}.items():
        monkeypatch.setenv(f"CARNET_QDRANT__{name}", value)
    q = Settings().qdrant
    assert (q.shard_number, q.replication_factor, q.write_consistency_factor) == (6, 2, 2)
    assert q.write_ordering is WriteOrdering.STRONG and q.read_consistency is ReadConsistencyType.MAJORITY
    monkeypatch.setenv("CARNET_QDRANT__READ_CONSISTENCY", "2")
    assert Settings().qdrant.read_consistency == 2


@pytest.mark.parametrize(("fields", "message"), [
    ({"replication_factor": 0}, "replication_factor"),
    ({"shard_number": 0}, "shard_number"),
    ({"replication_factor": 2, "write_consistency_factor": 3}, r"WRITE_CONSISTENCY_FACTOR \(3\) cannot exceed "
                                                                r"CARNET_QDRANT__REPLICATION_FACTOR \(2\)"),
    ({"write_consistency_factor": 2}, r"REPLICATION_FACTOR \(1, unset\)"),
    ({"write_ordering": "eventual"}, "write_ordering"),
    ({"read_consistency": "most"}, "read_consistency"),
    ({"read_consistency": 0}, "read_consistency"),
    ({"sharding": "tiered", "shard_number": 6}, "SHARDING=tiered keeps small tenants in one fallback shard"),
    ({"sharding": "per-tenant"}, "sharding"),
    ({"fallback_shard_key": ""}, "fallback_shard_key"),
])
def test_bad_cluster_settings_are_refused_with_a_clear_message(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        QdrantServerSettings.model_validate(fields)


def test_replication_translates_to_qdrant_client_models() -> None:
    from qdrant_client import models

    assert Distribution().write_ordering() is models.WriteOrdering.MEDIUM and Distribution().read_consistency() == 1
    r = Distribution(ordering="strong", consistency="quorum")
    assert r.write_ordering() is models.WriteOrdering.STRONG
    assert r.read_consistency() is models.ReadConsistencyType.QUORUM
    params = models.CollectionParams(shard_number=3, replication_factor=1, write_consistency_factor=1)
    assert Distribution(shard_number=3).differences(params) == {}
    assert Distribution(shard_number=6, replication_factor=2).differences(params) == {
        "shard_number": (6, 3), "replication_factor": (2, 1)}


def test_tiered_sharding_names_the_tenant_and_the_fallback() -> None:
    from qdrant_client import models

    assert Distribution().selector(Scope("acme", "h-1")) is None
    tiered = Distribution(tiered=True, fallback_shard_key="small")
    assert tiered.selector(Scope("acme", "h-1")) == models.ShardKeyWithFallback(target="acme", fallback="small")
    assert tiered.sharding_method() is models.ShardingMethod.CUSTOM
    tiered.check_sharding("c", models.CollectionParams(sharding_method=models.ShardingMethod.CUSTOM))
    with pytest.raises(ValueError, match="collection c uses auto sharding, CARNET_QDRANT__SHARDING=tiered needs"):
        tiered.check_sharding("c", models.CollectionParams())
    with pytest.raises(ValueError, match="uses custom sharding, CARNET_QDRANT__SHARDING=auto needs auto"):
        Distribution().check_sharding("c", models.CollectionParams(sharding_method=models.ShardingMethod.CUSTOM))
