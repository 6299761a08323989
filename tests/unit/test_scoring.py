from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from carnet.domain.records import Kind, Memory, Scope
from carnet.domain.scoring import CosineScale, Weights, final_score, frequency, recency, signals

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _memory(**kw: object) -> Memory:
    base = Memory(id="m", scope=Scope("t", "s"), kind=Kind.FACT, text="x", pseudo_text="x",
                  recorded_at=NOW, valid_from=NOW, updated_at=NOW)
    return replace(base, **kw)  # type: ignore[arg-type]


def test_cosine_scale_maps_model_range_to_unit_interval() -> None:
    scale = CosineScale(zero=0.75, one=0.95)
    assert scale.relevance(0.75) == 0.0
    assert scale.relevance(0.95) == 1.0
    assert scale.relevance(0.85) == pytest.approx(0.5)
    assert scale.relevance(0.2) == 0.0 and scale.relevance(0.99) == 1.0


def test_recency_halves_every_half_life_from_when_the_fact_became_true() -> None:
    old = _memory(valid_from=NOW - timedelta(days=90))
    assert recency(old, NOW, 90.0) == pytest.approx(0.5)
    assert recency(_memory(), NOW, 90.0) == pytest.approx(1.0)
    # written or read today does not make an old fact recent
    assert recency(replace(old, updated_at=NOW, last_accessed_at=NOW), NOW, 90.0) == pytest.approx(0.5)


def test_ranking_keeps_order_below_the_scale_zero() -> None:
    w = Weights()
    scale = CosineScale(zero=0.8, one=0.9)
    a = signals(_memory(), cosine=0.79, keyword=0.0, scale=scale, weights=w, now=NOW)
    b = signals(_memory(), cosine=0.75, keyword=0.0, scale=scale, weights=w, now=NOW)
    assert a.relevance == b.relevance == 0.0
    assert final_score(a, w) > final_score(b, w)


def test_frequency_saturates_with_reinforcements() -> None:
    assert frequency(_memory()) == 0.0
    assert 0 < frequency(_memory(reinforcement_count=1)) < frequency(_memory(reinforcement_count=2))
    assert 0.85 < frequency(_memory(reinforcement_count=5)) < 1.0


@given(st.integers(min_value=0, max_value=10_000), st.integers(min_value=0, max_value=50))
def test_reads_do_not_raise_frequency(reads: int, told: int) -> None:
    """Being returned by searches must not make a record rank higher (a loop on the questions asked)."""
    assert frequency(_memory(access_count=reads, reinforcement_count=told)) == frequency(
        _memory(reinforcement_count=told)
    )


def test_relevance_dominates_with_default_weights() -> None:
    w = Weights()
    scale = CosineScale(0.7, 0.95)
    relevant = signals(_memory(importance=0.1), cosine=0.93, keyword=0.5, scale=scale, weights=w, now=NOW)
    important = signals(_memory(importance=1.0), cosine=0.72, keyword=0.0, scale=scale, weights=w, now=NOW)
    assert final_score(relevant, w) > final_score(important, w)


def test_importance_breaks_ties_between_equally_relevant_records() -> None:
    w = Weights()
    scale = CosineScale()
    a = signals(_memory(importance=0.9), cosine=0.8, keyword=0.3, scale=scale, weights=w, now=NOW)
    b = signals(_memory(importance=0.2), cosine=0.8, keyword=0.3, scale=scale, weights=w, now=NOW)
    assert final_score(a, w) > final_score(b, w)


def test_signals_are_exposed_rounded() -> None:
    s = signals(_memory(), cosine=0.812345, keyword=0.0, scale=CosineScale(), weights=Weights(), now=NOW)
    assert s.as_dict()["cosine"] == 0.8123
    assert set(s.as_dict()) == {"cosine", "relevance", "keyword", "importance", "recency", "frequency",
                                "confidence"}
