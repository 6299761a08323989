"""How ``carnet bench extract`` finds the records that state a scenario fact told as calls."""

from __future__ import annotations

from datetime import datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from carnet.bench.extract import turns
from carnet.bench.extract_calls import best_matches, call_of, fact_records

CALLS = [
    {
        "session_id": "c1",
        "at": "2025-01-10T09:00:00+01:00",
        "messages": [
            {"role": "advisor", "content": "Bonjour, je vous écoute.", "at": "2025-01-10T09:00:00+01:00"},
            {"role": "user", "content": "J'habite à Lyon.", "at": "2025-01-10T09:00:20+01:00"},
        ],
    },
    {
        "session_id": "c2",
        "at": "2025-03-02T15:00:00+01:00",
        "messages": [{"role": "user", "content": "J'ai déménagé à Grenoble.", "at": "2025-03-02T15:00:10+01:00"}],
    },
]


def test_each_call_is_one_session_and_turns_know_their_call() -> None:
    story = turns({"calls": CALLS, "facts": []})
    assert [(t.index, t.session, t.call) for t in story] == [(0, "c1", 0), (1, "c1", 0), (2, "c2", 1)]
    assert [t.message.role for t in story] == ["advisor", "user", "user"]


def test_a_fact_belongs_to_the_call_under_way_or_the_last_one_started() -> None:
    assert call_of(CALLS, datetime.fromisoformat("2025-01-10T09:00:30+01:00")) == 0
    assert call_of(CALLS, datetime.fromisoformat("2025-02-01T00:00:00+01:00")) == 0
    assert call_of(CALLS, datetime.fromisoformat("2025-03-02T15:01:00+01:00")) == 1


def test_records_are_matched_by_what_they_say() -> None:
    candidates = {
        "a": "Le membre habite à Lyon 3e, rue Garibaldi.",
        "b": "Le membre préfère être appelé le soir.",
        "c": "Le membre habite à Lyon depuis 2019.",
    }
    assert best_matches("Il habite à Lyon 3e, rue Garibaldi.", candidates) == {"a"}  # c shares 2 of 5
    assert best_matches("Il habite à Lyon.", candidates) == {"a", "c"}
    assert best_matches("Rien en commun ici.", candidates) == set()


def test_fact_records_look_only_in_the_facts_call() -> None:
    sdata = {
        "calls": CALLS,
        "facts": [
            {"at": "2025-01-10T09:00:30+01:00", "text": "Il habite à Lyon."},
            {"at": "2025-03-02T15:00:30+01:00", "text": "Il habite à Grenoble."},
        ],
    }
    texts = {"r1": "Le membre habite à Lyon.", "r2": "Le membre a déménagé à Grenoble, il habite à Grenoble."}
    assert fact_records(sdata, [{"r1"}, {"r2"}], texts) == [{"r1"}, {"r2"}]
    assert fact_records(sdata, [{"r2"}, {"r1"}], texts) == [set(), set()]


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=60), st.dictionaries(st.sampled_from("abcdef"), st.text(max_size=60), max_size=6))
def test_matches_are_always_candidates(fact: str, candidates: dict[str, str]) -> None:
    assert best_matches(fact, candidates) <= set(candidates)
