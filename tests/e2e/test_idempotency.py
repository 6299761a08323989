"""``Idempotency-Key`` (issue 13, defect 5): the same key with the same body replays, with another body
answers 422 ``idempotency_key_reused`` and writes nothing; single and batch keys never collide."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from carnet_client import CarnetClient, IdempotencyKeyReused
from carnet_client import NewMemory as SdkMemory
from hypothesis import given
from hypothesis import strategies as st

from carnet.bootstrap.container import Container
from carnet.domain.idempotency import request_key
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.server import running
from carnet.services.apikeys import create_key

S = "/api/v1/subjects/ADH-0911"


@pytest.fixture
def server(container: Container) -> Iterator[tuple[str, str]]:
    key, _ = create_key(container.deps.catalog, container.pepper, tenant="t", roles=["agent", "dpo"])
    with running(create_app(container)) as base:
        yield base, key


@pytest.fixture
def http(server: tuple[str, str]) -> Iterator[httpx.Client]:
    base, key = server
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=30) as client:
        yield client


def _count(http: httpx.Client) -> int:
    return len(http.get(f"{S}/memories", params={"status": "any"}).json()["items"])


@pytest.mark.slow
def test_remember_same_key_other_body_is_refused_and_writes_nothing(http: httpx.Client) -> None:
    first = http.post(f"{S}/memories", headers={"Idempotency-Key": "call-1"},
                      json={"text": "Le membre habite à Lyon.", "tags": ["a"]})
    assert first.status_code == 201, first.text
    same = http.post(f"{S}/memories", headers={"Idempotency-Key": "call-1"},
                     json={"text": "Le membre habite à Lyon.", "tags": ["a"]})
    assert same.status_code == 201 and same.json()["action"] == "unchanged"
    assert same.json()["memory"]["id"] == first.json()["memory"]["id"]
    for other in ({"text": "Le membre habite à Brest."}, {"text": "Le membre habite à Lyon.", "tags": ["b"]},
                  {"text": "Le membre habite à Lyon.", "tags": ["a"], "importance": 0.9}):
        refused = http.post(f"{S}/memories", headers={"Idempotency-Key": "call-1"}, json=other)
        assert refused.status_code == 422, refused.text
        assert refused.json()["error"]["code"] == "idempotency_key_reused"
        assert "Brest" not in refused.text
    assert _count(http) == 1
    # a batch in which one item reuses its key with another body is refused whole
    ok = http.post(f"{S}/memories", headers={"Idempotency-Key": "b-1"},
                   json={"memories": [{"text": "Le membre a un chat."}, {"text": "Le membre a un vélo."}]})
    assert ok.status_code == 201
    bad = http.post(f"{S}/memories", headers={"Idempotency-Key": "b-1"},
                    json={"memories": [{"text": "Le membre a un chat."}, {"text": "Le membre a une moto."},
                                       {"text": "Le membre aime la voile."}]})
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "idempotency_key_reused"
    assert _count(http) == 3


@pytest.mark.slow
def test_single_key_never_collides_with_a_batch_item(http: httpx.Client) -> None:
    batch = http.post(f"{S}/memories", headers={"Idempotency-Key": "k"},
                      json={"memories": [{"text": "Le membre a deux enfants."}, {"text": "Le membre joue au golf."}]})
    assert batch.status_code == 201
    single = http.post(f"{S}/memories", headers={"Idempotency-Key": "k:1"},
                       json={"text": "Le membre collectionne les timbres."})
    assert single.status_code == 201, single.text
    assert single.json()["action"] == "created"
    assert single.json()["memory"]["id"] not in batch.json()["created"]


@given(st.text(max_size=12), st.none() | st.integers(0, 600), st.text(max_size=12), st.none() | st.integers(0, 600))
def test_request_keys_are_injective(key_a: str, index_a: int | None, key_b: str, index_b: int | None) -> None:
    same = (key_a, index_a) == (key_b, index_b)
    assert (request_key("api", key_a, index_a) == request_key("api", key_b, index_b)) is same
    assert request_key("api", key_a, index_a) != request_key("intake", key_b, index_b)


@pytest.mark.slow
def test_messages_same_key_other_body_is_refused(http: httpx.Client) -> None:
    body = {"session_id": "s-1", "messages": [{"role": "user", "content": "Bonjour, je déménage à Nantes."}]}
    first = http.post(f"{S}/messages", headers={"Idempotency-Key": "m-1"}, json=body)
    assert first.status_code == 202
    again = http.post(f"{S}/messages", headers={"Idempotency-Key": "m-1"}, json=body)
    assert again.status_code == 202 and again.json()["intake_id"] == first.json()["intake_id"]
    for other in ({**body, "session_id": "s-2"},
                  {"messages": [{"role": "user", "content": "Bonjour, je déménage à Lille."}]}):
        refused = http.post(f"{S}/messages", headers={"Idempotency-Key": "m-1"}, json=other)
        assert refused.status_code == 422, refused.text
        assert refused.json()["error"]["code"] == "idempotency_key_reused"
        assert "Lille" not in refused.text


@pytest.mark.slow
def test_sdk_raises_idempotency_key_reused(server: tuple[str, str]) -> None:
    base, key = server
    with CarnetClient(base, key) as carnet:
        carnet.remember("ADH-0912", "Le membre a un chien.", idempotency_key="sdk-1")
        with pytest.raises(IdempotencyKeyReused) as caught:
            carnet.remember("ADH-0912", "Le membre a un chat.", idempotency_key="sdk-1")
        assert caught.value.status == 422
        # a batch's items live in their own namespace: a batch of one under the same key is another request
        created = carnet.remember_batch("ADH-0912", [SdkMemory("Le membre a un chat.")], idempotency_key="sdk-1")
        assert [r.action for r in created.results] == ["created"]
