"""The Qdrant test server (tests/support/qdrant_rest) speaks Qdrant's protocol: envelope, errors,
refusals, API key, TLS and mutual TLS, prefetch with fusion; the cluster settings the adapter sends
(shards, replication, write ordering, read consistency) are recorded and reported. The
``VectorIndex`` contract runs on it in test_vector_index.py (parameter ``rest``)."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import uuid4

import httpx
import pytest
import structlog
from qdrant_client import QdrantClient, models

from carnet.adapters.vectors.qdrant_distribution import Distribution
from carnet.adapters.vectors.qdrant_server import connect
from carnet.bootstrap.stores import build_index
from carnet.domain.records import Scope
from carnet.errors import Conflict, DependencyUnavailable
from carnet.ports import AccessUpdate, SparseVector
from carnet.settings.root import Settings, VectorBackend
from tests.integration.test_vector_index import (
    ALL,
    DIM,
    NOW,
    SCOPE,
    drop,
    item,
    memory,
    open_rest,
    open_tiered,
    search,
    unit,
)
from tests.support.qdrant_rest import RunningQdrant, serving
from tests.support.tls import MtlsFiles, TlsFiles, make_mtls, make_tls

KEY = "test-api-key-0123456789"


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> TlsFiles:
    return make_tls(tmp_path_factory.mktemp("qdrant-tls"))


@pytest.fixture(scope="module")
def secured(tls_files: TlsFiles) -> Iterator[RunningQdrant]:
    """HTTPS from a test CA, API key required."""
    with serving(api_key=KEY, tls=tls_files) as running:
        yield running


@pytest.fixture
def collection(qdrant_rest: RunningQdrant) -> Iterator[str]:
    name = f"proto-{uuid4().hex}"
    yield name
    httpx.delete(f"{qdrant_rest.url}/collections/{name}")


def _create(url: str, name: str, **headers: str) -> httpx.Response:
    body = {"vectors": {"dense": {"size": 4, "distance": "Cosine"}}, "sparse_vectors": {"sparse": {"modifier": "idf"}}}
    return httpx.put(f"{url}/collections/{name}", json=body, headers=headers)


def _error(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"status", "time"} and isinstance(body["time"], float)
    assert set(body["status"]) == {"error"}
    return str(body["status"]["error"])


# -- protocol --------------------------------------------------------------------------------------


def test_answers_are_in_qdrants_envelope(qdrant_rest: RunningQdrant, collection: str) -> None:
    created = _create(qdrant_rest.url, collection)
    assert created.status_code == 200
    assert created.json()["result"] is True and created.json()["status"] == "ok"
    listed = httpx.get(f"{qdrant_rest.url}/collections").json()
    assert {"name": collection} in listed["result"]["collections"] and isinstance(listed["time"], float)
    version = httpx.get(f"{qdrant_rest.url}/").json()  # not wrapped, as Qdrant's
    assert version["title"] == "qdrant - vector search engine" and version["version"] >= "1.19"
    info = httpx.get(f"{qdrant_rest.url}/collections/{collection}").json()["result"]
    models.CollectionInfo.model_validate(info)  # everything the client requires is there
    assert info["config"]["params"]["shard_number"] == 1 and info["config"]["params"]["replication_factor"] == 1


def test_a_shape_qdrant_refuses_is_refused(qdrant_rest: RunningQdrant, collection: str) -> None:
    _create(qdrant_rest.url, collection)
    points = f"{qdrant_rest.url}/collections/{collection}/points"
    bad: list[tuple[str, dict[str, Any]]] = [
        ("scroll", {"limit": 2, "with_payloads": True}),  # unknown field (Qdrant: deny_unknown_fields)
        ("scroll", {"filter": {"must": [{"key": "k", "match": {"value": 1.5}}]}}),  # floats do not match
        ("count", {"filter": {"must": [{"key": "k"}], "mus": []}}),
        ("query", {"query": {"nearest": [1.0, "a"]}, "using": "dense"}),
        ("payload", {"payload": {"a": 1}}),  # neither points nor filter
    ]
    for path, body in bad:
        assert _error(httpx.post(f"{points}/{path}", json=body), 400).startswith("Format error in JSON body"), body
    assert _error(httpx.post(f"{points}/scroll", content=b"{not json"), 400).startswith("Format error in JSON body")
    wrong_dim = {"points": [{"id": 1, "vector": {"dense": [1.0, 0.0]}}]}
    assert "dim" in _error(httpx.put(points, json=wrong_dim), 400).lower()  # the engine's refusal


def test_a_body_breaking_qdrants_validation_rules_gets_422(qdrant_rest: RunningQdrant, collection: str) -> None:
    """Rules qdrant-client's models do not carry: the engine alone would take these (and a sparse
    vector with more indices than values would leave the shard unreadable)."""
    _create(qdrant_rest.url, collection)
    points = f"{qdrant_rest.url}/collections/{collection}/points"
    sparse = {"indices": [1, 2], "values": [1.0]}
    repeated = {"indices": [1, 1], "values": [1.0, 1.0]}
    invalid: list[tuple[str, str, dict[str, Any], str]] = [
        ("POST", f"{points}/scroll", {"limit": 0}, "limit: value 0 invalid"),
        ("POST", f"{points}/query", {"query": [1.0, 0.0, 0.0, 0.0], "using": "dense", "limit": 0}, "limit"),
        ("POST", f"{points}/query/batch", {"searches": [{"query": sparse, "using": "sparse"}]},
         "searches[0].query: must be the same length as indices"),
        ("PUT", points, {"points": [{"id": 1, "vector": {"sparse": repeated}}]},
         "points[0].vector.sparse.indices: must be unique"),
        ("POST", f"{points}/batch", {"operations": [{"upsert": {"points": [{"id": 1, "vector": {"sparse": sparse}}]}}]},
         "operations[0].upsert.points[0].vector.sparse"),
        ("PUT", f"{qdrant_rest.url}/collections/zero-{collection}", {"vectors": {"d": {"size": 0, "distance": "Dot"}}},
         "vectors.d.size"),
    ]
    for method, url, body, message in invalid:
        error = _error(httpx.request(method, url, json=body), 422)
        assert error.startswith("Validation error in JSON body: [") and message in error, error
    assert httpx.post(f"{points}/count", json={}).json()["result"] == {"count": 0}
    for name in ("a*b", "a:b", "x" * 256):
        refused = httpx.put(f"{qdrant_rest.url}/collections/{name}", json={"vectors": {}})
        assert _error(refused, 422).startswith("Validation error in path parameters"), name


def test_missing_existing_and_unreproduced(qdrant_rest: RunningQdrant, collection: str) -> None:
    url = qdrant_rest.url
    missing = _error(httpx.get(f"{url}/collections/{collection}"), 404)
    assert missing == f"Not found: Collection `{collection}` doesn't exist!"
    assert _error(httpx.post(f"{url}/collections/{collection}/points/count", json={}), 404).startswith("Not found")
    assert httpx.get(f"{url}/collections/{collection}/exists").json()["result"] == {"exists": False}
    _create(url, collection)
    assert "already exists" in _error(_create(url, collection), 409)
    columnar = {"batch": {"ids": [1], "vectors": {"dense": [[1.0, 0.0, 0.0, 0.0]]}}}
    assert "not reproduced" in _error(httpx.put(f"{url}/collections/{collection}/points", json=columnar), 501)
    custom = {"vectors": {"dense": {"size": 4, "distance": "Cosine"}}, "sharding_method": "custom"}
    assert httpx.put(f"{url}/collections/other-{collection}", json=custom).status_code == 200
    partial = {"shard_key": "acme", "initial_state": "Partial"}  # a promotion: replicate_points is not reproduced
    shards = f"{url}/collections/other-{collection}/shards"
    assert "partial" in _error(httpx.put(shards, json=partial), 501)
    httpx.delete(f"{url}/collections/other-{collection}")


def test_prefetch_with_rrf_fusion_scores_as_qdrant(qdrant_rest: RunningQdrant, collection: str) -> None:
    """Each prefetch ranks on its own, then RRF: a point at 0-based rank r adds 1 / (r + 2)
    (Qdrant's default k = 2)."""
    client = QdrantClient(url=qdrant_rest.url, check_compatibility=False)
    try:
        client.create_collection(collection, vectors_config={"dense": models.VectorParams(
            size=2, distance=models.Distance.COSINE)}, sparse_vectors_config={"sparse": models.SparseVectorParams()})
        dense = {1: [1.0, 0.0], 2: [0.8, 0.6], 3: [0.0, 1.0]}
        sparse = {1: ([5], [0.9]), 2: ([5], [0.1]), 3: ([6], [1.0])}
        client.upsert(collection, [models.PointStruct(id=i, vector={
            "dense": dense[i], "sparse": models.SparseVector(indices=sparse[i][0], values=sparse[i][1])})
            for i in dense], wait=True)
        prefetch = [models.Prefetch(query=[1.0, 0.0], using="dense", limit=3),  # ranks 1, 2, 3
                    models.Prefetch(query=models.SparseVector(indices=[5], values=[1.0]), using="sparse",
                                    limit=3)]  # ranks 1, 2 (3 shares no token)
        fused = client.query_points(collection, prefetch=prefetch, query=models.FusionQuery(
            fusion=models.Fusion.RRF), limit=3).points
        scores = {p.id: p.score for p in fused}
        assert [p.id for p in fused] == [1, 2, 3]
        assert scores == pytest.approx({1: 1 / 2 + 1 / 2, 2: 1 / 3 + 1 / 3, 3: 1 / 4})
        other_k = client.query_points(collection, prefetch=prefetch, query=models.RrfQuery(
            rrf=models.Rrf(k=10)), limit=3).points
        assert {p.id: p.score for p in other_k} == pytest.approx({1: 2 / 10, 2: 2 / 11, 3: 1 / 12})
        # weights: rank r of a prefetch weighted w adds 1 / ((r + 1) / w + k - 1)
        weighted = client.query_points(collection, prefetch=prefetch, query=models.RrfQuery(
            rrf=models.Rrf(weights=[3.0, 1.0])), limit=3).points
        assert {p.id: p.score for p in weighted} == pytest.approx(
            {1: 1 / (1 / 3 + 1) + 1 / 2, 2: 1 / (2 / 3 + 1) + 1 / 3, 3: 1 / (3 / 3 + 1)})
    finally:
        client.close()


def _every_call(idx: Any) -> None:
    """Each ``VectorIndex`` method once, so every write and read endpoint is called."""
    a = memory(SCOPE, "a")
    idx.upsert(SCOPE, [item(a, 1)])
    idx.hybrid_search(SCOPE, dense=unit(1), sparse=SparseVector([7], [1.0]), limit=3, where=ALL)
    idx.get(SCOPE, [a.id])
    idx.scroll(SCOPE, where=ALL, limit=5)
    idx.newest(SCOPE, where=ALL, limit=5)  # a scroll with order_by
    idx.count(SCOPE, where=ALL)
    idx.record_access(SCOPE, [AccessUpdate(a.id, 1, NOW)])
    idx.replace_payload(SCOPE, [a])
    new = Scope(SCOPE.tenant, "h-moved")
    idx.rescope(SCOPE, new, [(memory(new, "a", id=a.id), SparseVector([8], [1.0]))])
    idx.delete(new, [a.id])
    idx.check()


def test_the_adapter_calls_these_endpoints_and_no_other(qdrant_rest: RunningQdrant, collection: str) -> None:
    """What the server must reproduce for the adapter (README): every ``VectorIndex`` method once."""
    first = len(qdrant_rest.app.requests)
    idx = open_rest(qdrant_rest, collection)
    _every_call(idx)
    idx.close()
    c, p = "/collections/{name}", "/collections/{name}/points"
    assert set(qdrant_rest.app.requests[first:]) == {
        ("GET", "/"), ("GET", f"{c}/exists"), ("PUT", c), ("GET", c), ("PUT", f"{c}/index"),
        ("PUT", p), ("POST", p), ("POST", f"{p}/batch"), ("POST", f"{p}/delete"),
        ("POST", f"{p}/query/batch"), ("POST", f"{p}/scroll"), ("POST", f"{p}/count"),
    }
    drop(qdrant_rest, collection)


# -- cluster settings ------------------------------------------------------------------------------

WRITES = {("PUT", "/collections/{name}/index"), ("PUT", "/collections/{name}/points"),
          ("POST", "/collections/{name}/points/batch"), ("POST", "/collections/{name}/points/delete")}
READS = {("POST", "/collections/{name}/points"), ("POST", "/collections/{name}/points/query/batch"),
         ("POST", "/collections/{name}/points/scroll")}  # count takes no read consistency in Qdrant




def _params(running: RunningQdrant, name: str) -> dict[str, Any]:
    return dict(httpx.get(f"{running.url}/collections/{name}").json()["result"]["config"]["params"])


def _sent(running: RunningQdrant, since: int, routes: set[tuple[str, str]], key: str) -> set[str | None]:
    return {query.get(key) for method, route, query in running.app.queries[since:] if (method, route) in routes}


def test_the_adapter_creates_a_replicated_collection_and_sends_ordering_and_consistency(
        qdrant_rest: RunningQdrant, collection: str) -> None:
    first = len(qdrant_rest.app.queries)
    distribution = Distribution(shard_number=3, replication_factor=2, write_consistency_factor=2, ordering="strong",
                              consistency="majority")
    idx = connect(url=qdrant_rest.url, api_key=None, ca_cert=None, collection=collection, dim=DIM,
                  distribution=distribution)
    try:
        _every_call(idx)
    finally:
        idx.close()
    _assert_layout(qdrant_rest, collection, first, (3, 2, 2), ordering="strong", consistency="majority")


def _assert_layout(qdrant_rest: RunningQdrant, collection: str, first: int, layout: tuple[int, int, int], *,
                   ordering: str, consistency: str) -> None:
    """The collection's (shard number, replication factor, write consistency factor), and what every
    write and read since request ``first`` asked of the replicas."""
    params = _params(qdrant_rest, collection)
    assert (params["shard_number"], params["replication_factor"], params["write_consistency_factor"]) == layout
    assert _sent(qdrant_rest, first, WRITES, "ordering") == {ordering}
    assert _sent(qdrant_rest, first, READS, "consistency") == {consistency}


def test_by_default_qdrant_chooses_the_layout_writes_go_medium_and_reads_ask_one_replica(
        qdrant_rest: RunningQdrant, collection: str) -> None:
    first = len(qdrant_rest.app.queries)
    idx = open_rest(qdrant_rest, collection)
    try:
        _every_call(idx)
    finally:
        idx.close()
    params = _params(qdrant_rest, collection)
    assert (params["shard_number"], params["replication_factor"], params["write_consistency_factor"]) == (1, 1, 1)
    created = ("PUT", "/collections/{name}")
    assert [q for method, route, q in qdrant_rest.app.queries[first:] if (method, route) == created] == [{}]
    assert _sent(qdrant_rest, first, WRITES, "ordering") == {"medium"}
    assert _sent(qdrant_rest, first, READS, "consistency") == {"1"}


def test_an_existing_collection_laid_out_otherwise_is_kept_with_a_warning(
        qdrant_rest: RunningQdrant, collection: str) -> None:
    open_rest(qdrant_rest, collection).close()  # Qdrant's defaults: one shard, one replica
    asked = Distribution(shard_number=6, replication_factor=2, write_consistency_factor=1)
    with structlog.testing.capture_logs() as logs:
        connect(url=qdrant_rest.url, api_key=None, ca_cert=None, collection=collection, dim=DIM,
                distribution=asked).close()
    warned = {e["setting"]: (e["configured"], e["collection_has"]) for e in logs
              if e["event"] == "qdrant_collection_setting_differs"}
    assert warned == {"shard_number": (6, 1), "replication_factor": (2, 1)}
    assert all(e["log_level"] == "warning" and e["collection"] == collection for e in logs
               if e["event"] == "qdrant_collection_setting_differs")
    assert (_params(qdrant_rest, collection)["shard_number"], _params(qdrant_rest, collection)["replication_factor"]) \
        == (1, 1)  # never recreated


def test_ordering_and_consistency_are_checked_as_qdrant_deserialises_them(
        qdrant_rest: RunningQdrant, collection: str) -> None:
    _create(qdrant_rest.url, collection)
    points = f"{qdrant_rest.url}/collections/{collection}/points"
    assert httpx.post(f"{points}/count?consistency=quorum", json={}).status_code == 200
    assert httpx.post(f"{points}/count?consistency=2", json={}).status_code == 200
    assert _error(httpx.post(f"{points}/count?consistency=most", json={}), 400).startswith("Query deserialize error")
    wrong = httpx.put(f"{points}?ordering=eventual", json={"points": []})
    assert _error(wrong, 400).startswith("Query deserialize error")
    zero = {"vectors": {"dense": {"size": 4, "distance": "Cosine"}}, "replication_factor": 0}
    assert "replication_factor" in _error(httpx.put(f"{qdrant_rest.url}/collections/z-{collection}", json=zero), 422)


def test_bootstrap_hands_the_cluster_settings_to_the_adapter(
        qdrant_rest: RunningQdrant, collection: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {"URL": qdrant_rest.url, "COLLECTION": collection, "SHARD_NUMBER": "6",
                        "REPLICATION_FACTOR": "2", "WRITE_CONSISTENCY_FACTOR": "2", "WRITE_ORDERING": "strong",
                        "READ_CONSISTENCY": "all"}.items():
        monkeypatch.setenv(f"CARNET_QDRANT__{name}", value)
    first = len(qdrant_rest.app.queries)
    idx = build_index(Settings(vector_backend=VectorBackend.SERVER), DIM)
    try:
        idx.upsert(SCOPE, [item(memory(SCOPE, "a"), 1)])
        assert idx.count(SCOPE, where=ALL) == 1
    finally:
        idx.close()
    _assert_layout(qdrant_rest, collection, first, (6, 2, 2), ordering="strong", consistency="all")


def test_a_tiered_collection_sends_each_tenant_to_its_shard_or_the_fallback(
        qdrant_rest: RunningQdrant, collection: str) -> None:
    """Tiered multitenancy: custom sharding, a fallback shard made at creation, a tenant the operator
    promoted (a shard key of its own) served from there; every call names the tenant and the fallback."""
    idx = open_tiered(qdrant_rest, collection, promoted="banque-sud")
    other = Scope("banque-sud", "h-5f1c")
    try:
        assert _params(qdrant_rest, collection)["sharding_method"] == "custom"
        keys = httpx.get(f"{qdrant_rest.url}/collections/{collection}/shards").json()["result"]["shard_keys"]
        assert {k["key"] for k in keys} == {"default", "banque-sud"}
        idx.upsert(SCOPE, [item(memory(SCOPE, "a"), 1)])
        idx.upsert(other, [item(memory(other, "a"), 1), item(memory(other, "b"), 2)])
        shards = qdrant_rest.app.store.get(collection).shards
        assert (shards["default"].info().points_count, shards["banque-sud"].info().points_count) == (1, 2)
        assert idx.count(SCOPE, where=ALL) == 1 and idx.count(other, where=ALL) == 2
        assert search(idx, other, 1, limit=5)[0] == [memory(other, "a").id, memory(other, "b").id]
        with pytest.raises(Conflict):  # an id taken in another tenant's shard is still refused
            idx.upsert(SCOPE, [item(memory(SCOPE, "b", id=memory(other, "b").id), 3)])
    finally:
        idx.close()
    named = {(s.target, s.fallback) if isinstance(s, models.ShardKeyWithFallback) else s
             for s in qdrant_rest.app.store.get(collection).selectors}
    assert named == {(SCOPE.tenant, "default"), (other.tenant, "default"), None}  # None: the id check


def test_a_collection_sharded_otherwise_is_refused(qdrant_rest: RunningQdrant, collection: str) -> None:
    open_rest(qdrant_rest, collection).close()
    with pytest.raises(ValueError, match=f"collection {collection} uses auto sharding, "
                                         "CARNET_QDRANT__SHARDING=tiered needs custom"):
        open_tiered(qdrant_rest, collection)


def test_bootstrap_hands_tiered_sharding_to_the_adapter(
        qdrant_rest: RunningQdrant, collection: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {"URL": qdrant_rest.url, "COLLECTION": collection, "SHARDING": "tiered",
                        "FALLBACK_SHARD_KEY": "small-tenants"}.items():
        monkeypatch.setenv(f"CARNET_QDRANT__{name}", value)
    idx = build_index(Settings(vector_backend=VectorBackend.SERVER), DIM)
    try:
        idx.upsert(SCOPE, [item(memory(SCOPE, "a"), 1)])
    finally:
        idx.close()
    assert _params(qdrant_rest, collection)["sharding_method"] == "custom"
    assert qdrant_rest.app.store.get(collection).shards["small-tenants"].info().points_count == 1


# -- API key and TLS -------------------------------------------------------------------------------


def test_the_api_key_is_checked_as_qdrant_does(secured: RunningQdrant, tls_files: TlsFiles) -> None:
    verify = ssl.create_default_context(cafile=str(tls_files.ca_cert))
    with httpx.Client(verify=verify) as http:
        assert http.get(f"{secured.url}/").status_code == 200  # Qdrant's open paths
        assert http.get(f"{secured.url}/healthz").status_code == 200
        missing = http.get(f"{secured.url}/collections")
        assert (missing.status_code, missing.text) == (401, "Must provide an API key or an Authorization bearer token")
        wrong = http.get(f"{secured.url}/collections", headers={"api-key": "nope"})
        assert (wrong.status_code, wrong.text) == (401, "Invalid API key or JWT")
        assert http.get(f"{secured.url}/collections", headers={"api-key": KEY}).status_code == 200
        assert http.get(f"{secured.url}/collections", headers={"authorization": f"Bearer {KEY}"}).status_code == 200


def test_the_adapter_over_https_with_an_api_key(secured: RunningQdrant, tls_files: TlsFiles) -> None:
    name = f"tls-{uuid4().hex}"
    idx = connect(url=secured.url, api_key=KEY, ca_cert=tls_files.ca_cert, collection=name, dim=DIM)
    try:
        idx.upsert(SCOPE, [item(memory(SCOPE, "a"), 1), item(memory(SCOPE, "b"), 2)])
        assert search(idx, SCOPE, 1, limit=1)[0] == [memory(SCOPE, "a").id]
        assert idx.count(SCOPE, where=ALL) == 2
    finally:
        idx.close()
    with pytest.raises(DependencyUnavailable, match="401"):
        connect(url=secured.url, api_key="wrong", ca_cert=tls_files.ca_cert, collection=name, dim=DIM)
    with pytest.raises(DependencyUnavailable, match="401"):
        connect(url=secured.url, api_key=None, ca_cert=tls_files.ca_cert, collection=name, dim=DIM)
    with pytest.raises(DependencyUnavailable, match="CERTIFICATE_VERIFY_FAILED"):  # the system store does not know it
        connect(url=secured.url, api_key=KEY, ca_cert=None, collection=name, dim=DIM)


def test_the_adapter_over_mutual_tls(tmp_path: Path) -> None:
    files: MtlsFiles = make_mtls(tmp_path / "mtls")
    ca = files.server.ca_cert
    with serving(api_key=KEY, mtls=files) as running:
        idx = connect(url=running.url, api_key=KEY, ca_cert=ca, client_cert=(files.client_cert, files.client_key),
                      collection="mtls", dim=DIM)
        try:
            idx.upsert(SCOPE, [item(memory(SCOPE, "a"), 1)])
            assert idx.hybrid_search(SCOPE, dense=unit(1), sparse=None, limit=1, where=ALL).dense[0].score > 0.99
        finally:
            idx.close()
        for client_cert in (None, (files.stranger_cert, files.stranger_key)):
            with pytest.raises(DependencyUnavailable):
                connect(url=running.url, api_key=KEY, ca_cert=ca, client_cert=client_cert, collection="mtls", dim=DIM)


@pytest.mark.parametrize("tiered", [False, True])
def test_pods_starting_together_each_open_the_collection_one_of_them_created(
        qdrant_rest: RunningQdrant, collection: str, monkeypatch: pytest.MonkeyPatch, tiered: bool) -> None:
    """Two processes both find no collection, then both create it: Qdrant refuses the second creation
    (and the second fallback shard key), and that process opens the collection the first created
    instead of failing its start."""
    first = connect(url=qdrant_rest.url, api_key=None, ca_cert=None, collection=collection, dim=DIM,
                    distribution=Distribution(tiered=tiered))
    first.close()
    real_exists = QdrantClient.collection_exists
    seen: list[bool] = []

    def exists_as_before_the_first(self: QdrantClient, name: str) -> bool:  # no collection yet, once
        if not seen:
            seen.append(True)
            return False
        return bool(real_exists(self, name))

    monkeypatch.setattr(QdrantClient, "collection_exists", exists_as_before_the_first)
    real_keys = QdrantClient.list_shard_keys
    looked: list[bool] = []

    def keys_as_before_the_first(self: QdrantClient, name: str) -> Any:  # the fallback key not seen yet, once
        found = real_keys(self, name)
        if not looked:
            looked.append(True)
            return models.ShardKeysResponse(shard_keys=[])
        return found

    monkeypatch.setattr(QdrantClient, "list_shard_keys", keys_as_before_the_first)
    second = connect(url=qdrant_rest.url, api_key=None, ca_cert=None, collection=collection, dim=DIM,
                     distribution=Distribution(tiered=tiered))
    try:
        second.upsert(SCOPE, [item(memory(SCOPE, "raced"), 1)])
        assert second.count(SCOPE, where=ALL) == 1
    finally:
        second.close()
