"""The remote embedder's parts that need no server: the circuit breaker (on a clock the test moves),
the reading of an embeddings answer, and the settings (``CARNET_EMBED_SERVER__*``)."""

from __future__ import annotations

import base64
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from carnet.adapters.embedders.breaker import BreakerState, CircuitBreaker, CircuitOpen
from carnet.adapters.embedders.remote_protocol import BadAnswer, Prefixes, parse_answer, request_body
from carnet.settings.root import Settings


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_breaker_opens_after_failures_in_a_row_and_a_success_resets_the_count() -> None:
    clock = Clock()
    b = CircuitBreaker(failures=3, reset_seconds=5, clock=clock)
    for _ in range(2):
        b.before()
        b.failed()
    b.before()
    b.succeeded()  # the count starts again
    for _ in range(2):
        b.before()
        b.failed()
    assert b.state is BreakerState.CLOSED
    b.before()
    b.failed()
    assert b.state is BreakerState.OPEN
    clock.now += 2
    with pytest.raises(CircuitOpen) as refused:
        b.before()
    assert refused.value.retry_after == pytest.approx(3)
    assert b.retry_after() == pytest.approx(3)


def test_after_the_reset_time_one_trial_goes_and_its_outcome_decides() -> None:
    clock = Clock()
    b = CircuitBreaker(failures=1, reset_seconds=5, clock=clock)
    b.before()
    b.failed()
    clock.now += 5
    assert b.state is BreakerState.HALF_OPEN
    b.before()  # the trial
    with pytest.raises(CircuitOpen):
        b.before()  # the others wait for its outcome
    b.failed()
    assert b.state is BreakerState.OPEN  # open again, for another reset time
    clock.now += 5
    b.before()
    b.succeeded()
    assert b.state is BreakerState.CLOSED
    b.before()


def _answer(vectors: list[list[float]], *, model: str = "e5", b64: bool = False, order: list[int] | None = None
            ) -> dict[str, object]:
    order = order or list(range(len(vectors)))
    data = [{"index": i, "object": "embedding",
             "embedding": base64.b64encode(np.asarray(vectors[i], dtype="<f4").tobytes()).decode() if b64
             else vectors[i]} for i in order]
    return {"id": "embd-1", "object": "list", "created": 1, "model": model, "data": data,
            "usage": {"prompt_tokens": 3, "total_tokens": 3, "completion_tokens": 0, "prompt_tokens_details": None}}


@pytest.mark.parametrize("b64", [False, True])
def test_an_answer_is_read_by_index_and_normalised(b64: bool) -> None:
    out = parse_answer(_answer([[3.0, 4.0], [0.0, 2.0]], b64=b64, order=[1, 0]), count=2, dim=2, model="e5")
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 1.0]], rtol=1e-6)


@pytest.mark.parametrize(("answer", "reason"), [
    (_answer([[1.0, 0.0]], model="other"), "model_mismatch"),
    (_answer([[1.0, 0.0, 0.0]]), "model_mismatch"),  # another dimension
    (_answer([[1.0, 0.0], [0.0, 1.0]]), "bad_answer"),  # two vectors for one text
    (_answer([[0.0, 0.0]]), "bad_answer"),
    (_answer([[float("nan"), 1.0]]), "bad_answer"),
    ({"model": "e5", "data": [{"index": 0, "embedding": "%%%"}]}, "bad_answer"),
    ({"model": "e5", "data": [{"index": 3, "embedding": [1.0, 0.0]}]}, "bad_answer"),
    ({"model": "e5"}, "bad_answer"),
])
def test_an_unusable_answer_is_refused_with_its_reason(answer: object, reason: str) -> None:
    with pytest.raises(BadAnswer) as refused:
        parse_answer(answer, count=1, dim=2, model="e5")
    assert refused.value.reason == reason


def test_the_request_carries_e5_prefixes_or_asks_the_server_for_them() -> None:
    client = request_body(["a"], "query", model="e5", prefixes=Prefixes(), truncate_tokens=512)
    assert client == {"model": "e5", "input": ["query: a"], "encoding_format": "base64", "truncate_prompt_tokens": 512}
    assert request_body(["a"], "passage", model="e5", prefixes=Prefixes(), truncate_tokens=None)["input"] == [
        "passage: a"]
    server = request_body(["a"], "passage", model="e5", prefixes=Prefixes(by_server=True), truncate_tokens=None)
    assert server == {"model": "e5", "input": ["a"], "encoding_format": "base64", "input_type": "passage"}


def test_settings_refuse_a_key_over_plain_http_and_clear_urls_in_production(tmp_path: Path) -> None:
    key = tmp_path / "key"
    key.write_text("k")
    with pytest.raises(ValidationError, match="API_KEY_FILE needs an https"):
        Settings(embed_server={"base_url": "http://gpu:8000", "api_key_file": key})
    with pytest.raises(ValidationError, match="goes without /v1"):
        Settings(embed_server={"base_url": "https://gpu:8000/v1"})
    with pytest.raises(ValidationError, match="EMBED_SERVER__BASE_URL must use https in production"):
        Settings(environment="production", embedder="remote", embed_server={"base_url": "http://gpu:8000"},
                 api_key_pepper="p" * 32, kms_backend="vault", vault={"url": "https://vault:8200"})
    s = Settings(embedder="remote", embed_server={"base_url": "https://gpu:8000", "model": "e5"})
    assert s.embed_server.store_model_id == "e5"
