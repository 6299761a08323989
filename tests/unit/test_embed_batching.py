"""``QueryBatcher``: concurrent queries share model calls, a lone one waits for nobody, errors reach their batch."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from carnet.adapters.embedders.batching import QueryBatcher
from carnet.ports import Vector


class SlowModel:
    """A model whose every call takes ``seconds``; a query's vector encodes its text's length."""

    model_id = "fake/slow"
    dim = 4

    def __init__(self, seconds: float = 0.05, fail_on: str | None = None) -> None:
        self.seconds, self.fail_on = seconds, fail_on
        self.calls: list[list[str]] = []
        self._lock = threading.Lock()

    def embed_passages(self, texts: Sequence[str]) -> Vector:
        return np.ones((len(texts), self.dim), dtype=np.float32)

    def embed_query(self, text: str) -> Vector:
        return self.embed_queries([text])[0]

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        with self._lock:  # one model: calls run one at a time, as the real ones do
            self.calls.append(list(texts))
            time.sleep(self.seconds)
            if self.fail_on is not None and self.fail_on in texts:
                raise RuntimeError("model failed")
            return np.array([[len(t), 1, 0, 0] for t in texts], dtype=np.float32)


def _concurrently(batcher: QueryBatcher, texts: Sequence[str]) -> dict[str, Vector | BaseException]:
    out: dict[str, Vector | BaseException] = {}
    start = threading.Barrier(len(texts))

    def ask(t: str) -> None:
        start.wait()
        try:
            out[t] = batcher.embed_query(t)
        except BaseException as exc:
            out[t] = exc

    threads = [threading.Thread(target=ask, args=(t,)) for t in texts]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=10)
    assert not any(th.is_alive() for th in threads), "a query never came back"
    return out


def test_a_lone_query_is_one_model_call_of_one() -> None:
    model = SlowModel(seconds=0.0)
    batcher = QueryBatcher(model)
    assert batcher.embed_query("abc")[0] == 3
    assert model.calls == [["abc"]]


def test_concurrent_queries_share_model_calls_and_each_gets_its_own_vector() -> None:
    model = SlowModel(seconds=0.05)
    batcher = QueryBatcher(model, max_batch=16)
    texts = ["x" * n for n in range(1, 13)]
    out = _concurrently(batcher, texts)
    for t in texts:
        v = out[t]
        assert isinstance(v, np.ndarray) and v[0] == len(t)
    assert len(model.calls) < len(texts)  # the ones that waited went together
    assert sorted(t for call in model.calls for t in call) == sorted(texts)  # each embedded once, one call per batch


def test_a_batch_never_exceeds_its_limit() -> None:
    model = SlowModel(seconds=0.03)
    out = _concurrently(QueryBatcher(model, max_batch=3), [f"q{n}" for n in range(10)])
    assert len(out) == 10 and max(len(c) for c in model.calls) <= 3


def test_a_failure_reaches_its_batch_and_the_next_queries_still_work() -> None:
    model = SlowModel(seconds=0.03, fail_on="bad")
    batcher = QueryBatcher(model)
    out = _concurrently(batcher, ["bad", *(f"ok{n}" for n in range(6))])
    failed = {t for t, v in out.items() if isinstance(v, BaseException)}
    assert "bad" in failed
    for t in failed:
        assert isinstance(out[t], RuntimeError)
        assert any("bad" in call and t in call for call in model.calls)  # only the failed batch's queries
    model.fail_on = None
    assert batcher.embed_query("after")[0] == 5  # the batcher is not left busy


def test_passages_and_identity_go_to_the_model() -> None:
    model = SlowModel()
    batcher = QueryBatcher(model)
    assert batcher.model_id == "fake/slow" and batcher.dim == 4
    assert batcher.embed_passages(["a", "b"]).shape == (2, 4)
    with pytest.raises(ValueError):
        QueryBatcher(model, max_batch=0)


class OneByOne:
    """A model with no batch method: the batcher calls it once per query, in order."""

    model_id, dim = "fake/one", 2

    def embed_passages(self, texts: Sequence[str]) -> Vector:
        return np.zeros((len(texts), 2), dtype=np.float32)

    def embed_query(self, text: str) -> Vector:
        return np.array([len(text), 0], dtype=np.float32)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.text(max_size=5), min_size=1, max_size=8))
def test_every_query_gets_the_vector_the_model_gives_it(texts: list[str]) -> None:
    batcher = QueryBatcher(OneByOne(), max_batch=3)
    vectors = batcher.embed_queries(texts)
    assert [int(v[0]) for v in vectors] == [len(t) for t in texts]
    assert all(int(batcher.embed_query(t)[0]) == len(t) for t in texts)
