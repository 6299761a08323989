"""``bench scenarios``' measures on fake records and a fake search: mapping facts to records, stale,
superseded (from searches and from status), false supersessions, noise, nulls."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from carnet.bench.scenarios_calls import CallStats, api_role, calls_of, parts, tell
from carnet.bench.scenarios_match import CARRY_SHARE, Weights, carried, coverage, words
from carnet.bench.scenarios_measures import (
    Record,
    Scores,
    View,
    score_queries,
    score_records,
    score_superseded,
    view_by_words,
)
from carnet.bench.scenarios_report import Run, summary

FACTS = [
    "Le membre habite au 4 rue des Lilas à Colmar.",
    "Contrat habitation formule Confort, cotisation de 31,20 euros par mois.",
    "Nouvelle adresse : 12 avenue Foch, 68000 Mulhouse.",
    "Le membre souhaite être contacté par courriel plutôt que par téléphone.",
]
WEIGHTS = Weights.of(
    [*FACTS, "Le contrat auto du membre coûte 40 euros par mois.", "Contrat santé, 80 euros par mois."]
)


def _rec(mid: str, text: str, status: str = "active", kind: str = "fact") -> Record:
    return Record(id=mid, text=text, status=status, kind=kind)


def _search(answers: dict[str, Sequence[tuple[str, str]]]) -> Any:
    return lambda q: answers.get(q, [])


def test_the_documented_noise_example_carries_no_fact() -> None:
    assert carried("Le conseiller note sa nouvelle adresse.", FACTS, WEIGHTS) == frozenset()


def test_a_rephrased_record_carries_its_fact_and_not_the_older_one() -> None:
    assert carried("Il a déménagé à Mulhouse, 12 avenue Foch.", FACTS, WEIGHTS) == {2}
    assert carried("Préfère les courriels au téléphone.", FACTS, WEIGHTS) == {3}


def test_words_fold_case_accents_and_drop_function_words() -> None:
    assert words("Élodie PRÉFÈRE les courriels, 31,20 € et 4 rue") == {
        "elodie",
        "prefere",
        "courriel",
        "31,20",
        "rue",
        "4",
    }


_text = st.lists(
    st.sampled_from(
        [
            "membre",
            "Colmar",
            "contrat",
            "Foch",
            "euros",
            "31,20",
            "téléphone",
            "rue",
            "avenue",
            "Mulhouse",
            "courriel",
            "matin",
            "soir",
            "dossier",
            "expertise",
        ]
    ),
    min_size=1,
    max_size=8,
).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(facts=st.lists(_text, min_size=1, max_size=6, unique=True), pick=st.integers(min_value=0))
def test_a_fact_stored_as_written_carries_itself(facts: list[str], pick: int) -> None:
    i = pick % len(facts)
    weights = Weights.of(facts)
    assert coverage(words(facts[i]), words(facts[i]), weights) == 1.0 >= CARRY_SHARE
    assert i in carried(facts[i], facts, weights) or any(
        words(f) == words(facts[i]) for f in facts[:i] + facts[i + 1 :]
    )


@settings(max_examples=60, deadline=None)
@given(
    kinds=st.lists(st.sampled_from(["short", "latest", "case", None]), max_size=12),
    returned=st.lists(st.booleans(), min_size=12, max_size=12),
)
def test_by_kind_sums_to_the_totals(kinds: list[str | None], returned: list[bool]) -> None:
    queries = [{"q": f"q{n}", "expect_any": ["Colmar"], "kind": k} for n, k in enumerate(kinds)]
    search = _search({f"q{n}": [("r0", FACTS[0])] for n in range(len(kinds)) if returned[n]})
    scores = Scores()
    score_queries(scores, "s", queries, View(records={}, carriers=[frozenset({"r0"})]), search)
    assert sum(h for h, _ in scores.by_kind.values()) == scores.hits == sum(returned[: len(kinds)])
    assert sum(n for _, n in scores.by_kind.values()) == scores.queries == len(kinds)


def test_a_returned_old_fact_is_stale_and_not_a_hit() -> None:
    view = View(records={}, carriers=[frozenset({"old"}), frozenset({"new"})])
    query = {"q": "Où habite-t-il ?", "expect_any": ["Mulhouse"], "not_old": 0}
    scores = Scores()
    score_queries(scores, "s", [query], view, _search({query["q"]: [("new", "Mulhouse"), ("old", "Colmar")]}))
    assert (scores.hits, scores.stale_found, scores.stale_checked) == (0, 1, 1)


def test_queries_whose_expected_words_nobody_says_are_counted_apart() -> None:
    queries = [{"q": "Où vit-il ?", "expect_any": ["Mulhouse"]}, {"q": "Démarchage ?", "expect_any": ["oppose"]}]
    scores = Scores()
    said = "le membre habite à mulhouse depuis mars."
    score_queries(scores, "s", queries, View(records={}, carriers=[]), _search({"Où vit-il ?": [("r", "Mulhouse")]}),
                  said=said)
    assert (scores.said, scores.said_hits, scores.hits) == (1, 1, 1)
    out = summary(Run(source="calls", scores=scores))
    assert (out["expected_said"], out["recall_at_3_said"]) == (1, 1.0)
    assert summary(Run(source="facts", scores=scores))["expected_said"] is None


def _pair_subject() -> dict[str, Any]:
    return {
        "facts": [{"text": FACTS[0]}, {"text": FACTS[2]}],
        "queries": [{"q": "Adresse ?", "expect_any": ["Mulhouse"], "not_old": 0}],
        "superseded": [{"old": 0, "by": 1}],
    }


def test_superseded_is_hidden_only_when_no_search_returns_it() -> None:
    records = {"a": _rec("a", FACTS[0], "superseded"), "b": _rec("b", FACTS[2])}
    view = View(records=records, carriers=[frozenset({"a"}), frozenset({"b"})])
    hidden, shown = Scores(), Scores()
    score_superseded(hidden, "s", _pair_subject(), view, _search({"Adresse ?": [("b", FACTS[2])]}))
    score_superseded(shown, "s", _pair_subject(), view, _search({FACTS[0]: [("a", FACTS[0])]}))
    assert (hidden.superseded_hidden, hidden.superseded_checked, hidden.status_hidden) == (1, 1, 1)
    assert (shown.superseded_hidden, shown.superseded_checked) == (0, 1)  # returned with its own text


def test_status_needs_every_record_of_the_old_fact_superseded() -> None:
    records = {
        "a": _rec("a", FACTS[0], "superseded"),
        "a2": _rec("a2", "Habite rue des Lilas à Colmar."),
        "b": _rec("b", FACTS[2]),
    }
    view = view_by_words(records, [FACTS[0], FACTS[2]], WEIGHTS)
    scores = Scores()
    score_superseded(scores, "s", _pair_subject(), view, _search({}))
    assert view.carriers[0] == {"a", "a2"}
    assert (scores.status_hidden, scores.status_checked) == (0, 1)


def test_an_old_fact_left_without_a_record_is_unmapped_not_hidden() -> None:
    view = View(records={"b": _rec("b", FACTS[2])}, carriers=[frozenset(), frozenset({"b"})])
    scores = Scores()
    score_superseded(scores, "s", _pair_subject(), view, _search({}))
    assert (scores.superseded_unmapped, scores.superseded_checked, scores.status_checked) == (1, 0, 0)
    assert summary(Run(source="calls", scores=scores))["superseded_hidden"] is None


def test_false_supersessions_and_noise_are_counted_on_fact_records() -> None:
    sdata = {**_pair_subject(), "queries": [{"q": "Formule ?", "expect_any": ["Confort"]}]}
    records = {
        "a": _rec("a", FACTS[0], "superseded"),  # named as old: a true supersession
        "b": _rec("b", FACTS[2], "superseded"),  # not an old: hiding a true fact
        "n": _rec("n", "Le conseiller note sa nouvelle adresse."),
        "e": _rec("e", "La formule Confort est évoquée."),  # no fact, but a query's answer
        "ep": _rec("ep", "Appel sur l'adresse.", kind="episode"),
    }
    view = view_by_words(records, [FACTS[0], FACTS[2]], WEIGHTS)
    scores = Scores()
    score_records(scores, sdata, view)
    assert (scores.false_superseded, scores.noise_records, scores.fact_records, scores.episodes) == (1, 1, 4, 1)
    assert scores.false_superseded_kept == 0


def test_a_false_supersession_whose_fact_an_active_record_still_says_is_counted_kept() -> None:
    records = {"b": _rec("b", FACTS[2], "superseded"), "r": _rec("r", FACTS[2])}  # the remainder says it
    view = view_by_words(records, [FACTS[0], FACTS[2]], WEIGHTS)
    scores = Scores()
    score_records(scores, _pair_subject(), view)
    assert (scores.false_superseded, scores.false_superseded_kept) == (1, 1)


def test_nothing_to_check_is_null_not_one() -> None:
    out = summary(Run(source="calls", scores=Scores()))
    for key in ("recall_at_3", "recall_at_3_said", "superseded_hidden", "superseded_status", "stale",
                "facts_per_call", "noise"):
        assert out[key] is None, key
    assert summary(Run(source="facts", scores=Scores(fact_records=3)))["noise"] is None


def test_a_subject_without_calls_is_told_one_call_per_day() -> None:
    sdata = {
        "facts": [
            {"at": "2026-01-02T10:00:00Z", "text": "a"},
            {"at": "2026-01-02T11:00:00Z", "text": "b"},
            {"at": "2026-02-01T10:00:00Z", "text": "c"},
        ]
    }
    calls = calls_of(sdata)
    assert [len(c["messages"]) for c in calls] == [2, 1]
    assert {m["role"] for c in calls for m in c["messages"]} == {"user"}


@given(n=st.integers(min_value=0, max_value=450), size=st.integers(min_value=1, max_value=200))
def test_long_calls_are_cut_in_parts_that_keep_every_message_in_order(n: int, size: int) -> None:
    messages = [{"content": str(i)} for i in range(n)]
    chunks = list(parts(messages, size))
    assert all(0 < len(c) <= size for c in chunks)
    assert [m for c in chunks for m in c] == messages


def test_calls_are_posted_in_order_and_a_dead_intake_is_reported() -> None:
    posted: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            posted.append({"key": request.headers["Idempotency-Key"], **json.loads(request.content)})
            return httpx.Response(202, json={"intake_id": f"i{len(posted)}", "status": "pending"})
        dead = request.url.path.endswith("/i2")
        return httpx.Response(
            200, json={"status": "dead" if dead else "done", "reason": "extract_failed" if dead else None}
        )

    calls = [
        {"session_id": "c1", "messages": [{"role": "advisor", "content": "Bonjour.", "at": "2026-01-02T10:00:00Z"}]},
        {"session_id": "c2", "at": "2026-01-03T10:00:00Z", "messages": [{"role": "user", "content": "Oui."}]},
    ]
    stats = CallStats()
    with httpx.Client(transport=httpx.MockTransport(handler), base_url="http://t") as http:
        tell(http, "s1", calls, stats)
    assert [p["session_id"] for p in posted] == ["c1", "c2"] and [p["key"] for p in posted] == ["c1:0", "c2:0"]
    assert posted[1]["messages"] == [{"role": "user", "content": "Oui.", "at": "2026-01-03T10:00:00Z"}]
    assert (stats.calls, stats.intakes, stats.dead) == (2, 2, 1)
    assert stats.problems == ["s1: intake of c2:0 dead (extract_failed)"]


def test_an_unknown_role_is_refused() -> None:
    assert api_role("advisor") == "advisor"
    with pytest.raises(ValueError, match="customer"):
        api_role("customer")


def test_said_any_judges_a_query_from_calls_on_the_calls_words() -> None:
    query = {"q": "Quelle voiture ?", "expect_any": ["Skoda Octavia (notes)"], "said_any": ["Octavia break"],
             "not_old": 0}
    view = View(records={}, carriers=[frozenset({"old"})])
    scores = Scores()
    score_queries(scores, "s", [query], view, _search({query["q"]: [("new", "Une octavia BREAK grise")]}), said="")
    assert (scores.said, scores.said_hits, scores.hits, scores.said_basis) == (1, 1, 0, "said_any")
    stale = Scores()
    score_queries(stale, "s", [query], view, _search({query["q"]: [("new", "Octavia break"), ("old", "3008")]}),
                  said="")
    assert (stale.said, stale.said_hits) == (1, 0)  # the old fact in the top-3 is no hit, whatever is said


def test_said_any_phrases_count_as_a_query_answer_for_noise() -> None:
    sdata = {"facts": [{"text": FACTS[0]}], "queries": [{"q": "?", "expect_any": ["zzz"], "said_any": ["Octavia"]}]}
    view = view_by_words({"r": _rec("r", "Il roule en octavia.")}, [FACTS[0]], WEIGHTS)
    scores = Scores()
    score_records(scores, sdata, view)
    assert (scores.fact_records, scores.noise_records) == (1, 0)
