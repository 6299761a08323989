"""The Qdrant test server in its own process (``python -m carnet.bench.topology.qdrant_rest``, what
``carnet bench soak`` restarts) keeps its collections across a restart, as a Qdrant node does: the
points, the payload indexes and the configuration come back from its directory."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from qdrant_client import QdrantClient
from qdrant_client.http import models as m

from carnet.bench.soak.stack import QdrantProcess


def _client(server: QdrantProcess) -> QdrantClient:
    return QdrantClient(url=server.url, check_compatibility=False)


def test_a_restarted_server_reopens_its_collections(tmp_path: Path) -> None:
    server = QdrantProcess(tmp_path)
    server.start()
    try:
        client = _client(server)
        client.create_collection("kept", vectors_config={"d": m.VectorParams(size=2, distance=m.Distance.COSINE)})
        client.create_payload_index("kept", "tenant", m.KeywordIndexParams(type=m.KeywordIndexType.KEYWORD,
                                                                           is_tenant=True))
        client.upsert("kept", [m.PointStruct(id=n, vector={"d": [1.0, float(n)]}, payload={"tenant": "a"})
                               for n in range(1, 4)])
        client.close()
        server.stop()
        server.start()
        again = _client(server)
        assert again.count("kept").count == 3
        info = again.get_collection("kept")
        assert info.payload_schema["tenant"].params == m.KeywordIndexParams(type=m.KeywordIndexType.KEYWORD,
                                                                            is_tenant=True)
        hits = again.query_points("kept", query=[1.0, 3.0], using="d", limit=1,
                                  query_filter=m.Filter(must=[m.FieldCondition(key="tenant",
                                                                               match=m.MatchValue(value="a"))]))
        assert [p.id for p in hits.points] == [3]
        again.close()
    finally:
        server.stop()


def test_indexes_asked_at_once_by_processes_starting_together_are_all_kept(tmp_path: Path) -> None:
    """Two APIs and two workers starting together each create the same payload indexes: every request
    succeeds and the server's ``collection.json`` holds them all (it once answered 500 to one of two
    creations racing on its temporary file)."""
    server = QdrantProcess(tmp_path)
    server.start()
    try:
        client = _client(server)
        client.create_collection("raced", vectors_config={"d": m.VectorParams(size=2, distance=m.Distance.COSINE)})
        fields = [f"field_{n}" for n in range(8)]
        with ThreadPoolExecutor(max_workers=8) as pool:
            done = list(pool.map(lambda name: client.create_payload_index(
                "raced", name, m.KeywordIndexParams(type=m.KeywordIndexType.KEYWORD)), fields * 3))
        assert all(r.status == m.UpdateStatus.COMPLETED for r in done)
        client.close()
        server.stop()
        server.start()
        again = _client(server)
        assert set(again.get_collection("raced").payload_schema) == set(fields)
        again.close()
    finally:
        server.stop()
