"""The judge's model file and its fitting: plain numbers read back exactly, bad files refused with a
reason, fitting deterministic and able to find a planted signal."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from carnet.bench.judge_fit import Choice, choose_thresholds, closures, fit, train
from carnet.domain.reconcile.evidence import FEATURES, says_change
from carnet.domain.reconcile.judge_model import ModelFileError, SupersessionModel

N = len(FEATURES)


def good() -> dict[str, object]:
    return {"version": "t", "features": list(FEATURES), "mean": [0.0] * N, "scale": [1.0] * N,
            "weights": [0.5] + [0.0] * (N - 1), "bias": -0.25, "close_at": 0.9, "ask_from": 0.6}


def test_a_file_reads_back_to_the_same_model() -> None:
    model = SupersessionModel.from_mapping(good())
    assert SupersessionModel.from_mapping(model.to_mapping()) == model
    assert model.probability([0.5] + [0.0] * (N - 1)) == pytest.approx(0.5)


@pytest.mark.parametrize(("key", "value"), [
    ("features", list(reversed(FEATURES))), ("mean", [0.0] * (N - 1)), ("scale", [0.0] * N),
    ("weights", [float("nan")] * N), ("bias", "1"), ("close_at", 0.5), ("ask_from", -0.1), ("version", ""),
    ("weights", [True] * N),
])
def test_a_file_this_version_cannot_use_is_refused(key: str, value: object) -> None:
    with pytest.raises(ModelFileError):
        SupersessionModel.from_mapping(good() | {key: value})


@given(st.floats(-8, 8), st.sampled_from(("values_differ", "change_new", "negation_flip", "negation_new",
                                          "same_topic")))
def test_without_a_sign_of_change_the_model_never_closes_nor_contests(cosine: float, sign: str) -> None:
    """"a un chien, un labrador" then "a aussi un chat": alike, nothing says a state changed. What the model
    would close is only uncertain, asked of an LLM but never contested, however sure the model is of the
    likeness: a failed or absent LLM leaves the two side by side. With one sign of change, the model decides
    and contests its whole band."""
    model = SupersessionModel.from_mapping(good())
    bare = [cosine] + [0.0] * (N - 1)
    signed = [v if f != sign else 1.0 for f, v in zip(FEATURES, bare, strict=True)]
    p = model.probability(bare)
    assert model.probability(signed) == p and model.judge(None, None, signed) == p  # the sign has no weight here
    assert says_change(signed) and not says_change(bare) and model.contests(tuple(signed))
    seen = model.judge(None, None, bare)
    assert not model.contests(tuple(bare))
    if p >= model.close_at:
        assert model.ask_from <= seen < model.close_at
    else:
        assert seen == p


def planted(seed: int, n: int = 400) -> list[Choice]:
    """Notes of four candidates each; the labelled one has a high first feature, noise elsewhere."""
    rng = random.Random(seed)
    out = []
    for k in range(n // 4):
        truth = rng.randrange(4) if k % 2 else -1  # half the notes close nothing
        rows = tuple(tuple([rng.uniform(0.6, 1.0) if c == truth else rng.uniform(0.0, 0.5)]
                           + [rng.gauss(0, 1) for _ in range(N - 1)]) for c in range(4))
        out.append(Choice(rows, tuple(c == truth for c in range(4))))
    return out


def test_fitting_is_deterministic_and_finds_the_planted_signal() -> None:
    choices = planted(1)
    first, second = (train(choices, 100, version="t", max_false=0.02) for _ in range(2))
    assert first == second
    assert first.weights[0] == max(first.weights) > 0
    right, wrong = closures(first, planted(2), first.close_at)  # other draws: the signal carries
    assert right >= 45 and wrong <= 5  # in-sample budget 2; new draws may miss it by a few


def test_thresholds_keep_false_closures_within_the_budget_on_the_training_notes() -> None:
    choices = planted(3)
    x = np.array([r for c in choices for r in c.rows])
    y = np.array([float(v) for c in choices for v in c.labels])
    mean, scale, weights, bias = fit(x, y)
    model = SupersessionModel("t", tuple(mean), tuple(scale), tuple(weights), bias, 0.5, 0.5)
    close_at, ask_from = choose_thresholds(model, choices, 100, max_false=0.01)
    assert closures(model, choices, close_at)[1] <= 1 and ask_from <= close_at


def test_a_sites_correction_becomes_a_row_labelled_not_superseded() -> None:
    from datetime import UTC, datetime
    from types import SimpleNamespace

    from carnet.bench.judge import correction_rows
    from carnet.domain.corrections import CorrectionPair

    class Embedder:
        def embed_passages(self, texts: list[str]) -> np.ndarray:
            assert all("<PERSON_1>" in t or "Sam" in t or "Alex" in t for t in texts)  # pseudonymised texts only
            return np.array([[1.0, 0.0], [0.6, 0.8]])

    at = datetime(2025, 1, 1, tzinfo=UTC)
    pair = CorrectionPair("c1", "<PERSON_1> habite à Lyon.", "<PERSON_1> travaille à Lyon.", at,
                          at.replace(month=6), at.replace(month=6), at.replace(month=7))
    [choice] = correction_rows(SimpleNamespace(locale="fr", embedder=Embedder()), [pair])
    assert choice.labels == (False,) and len(choice.rows[0]) == N
    assert choice.rows[0][FEATURES.index("cosine")] == pytest.approx(0.6)
