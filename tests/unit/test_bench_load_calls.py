"""``carnet bench load --turns``: who each question is about (``Calls``): a member drawn at random, or
the member of one of the calls on the line, each call asking its turns about one member."""

from __future__ import annotations

import random
from collections import Counter
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from carnet.bench.load import CALLS_AT_ONCE, Calls, _shot
from carnet.bench.served import subject
from carnet.entrypoints.cli.main import app

seeds = st.integers(0, 2**32 - 1)


@given(seeds, st.integers(1, 50), st.integers(2, 8), st.integers(0, 40))
def test_one_call_at_a_time_asks_all_its_turns_about_one_member(seed: int, subjects: int, turns: int,
                                                                calls: int) -> None:
    line = Calls(random.Random(seed), subjects, turns, at_once=1)
    asked = [line.member() for _ in range(turns * calls)]
    assert all(0 <= m < subjects for m in asked)
    assert all(len(set(asked[i:i + turns])) == 1 for i in range(0, len(asked), turns))


@given(seeds, st.integers(1, 30), st.integers(2, 8), st.integers(1, 10), st.integers(0, 300))
def test_only_the_calls_still_on_the_line_have_turns_left(seed: int, subjects: int, turns: int, at_once: int,
                                                         n: int) -> None:
    """Every member's questions are whole calls of ``turns``, but for the calls still on the line (a member
    drawn for two calls counts both)."""
    line = Calls(random.Random(seed), subjects, turns, at_once=at_once)
    counts = Counter(line.member() for _ in range(n))
    assert sum(1 for c in counts.values() if c % turns) <= at_once


def test_calls_interleave_when_several_are_on_the_line() -> None:
    line = Calls(random.Random(7), 1_000_000, 6, at_once=CALLS_AT_ONCE)
    asked = [line.member() for _ in range(600)]
    runs = sum(1 for a, b in pairwise(asked) if a != b)
    assert runs > 400  # the calls' questions come in between one another, not six in a row
    assert max(Counter(asked).values()) <= 12  # and each call asks six (two calls may draw one member)


@given(seeds, st.integers(1, 40), st.integers(0, 50))
def test_one_turn_is_a_member_drawn_at_random(seed: int, subjects: int, n: int) -> None:
    line, rng = Calls(random.Random(seed), subjects, 1), random.Random(seed)
    assert [line.member() for _ in range(n)] == [rng.randrange(subjects) for _ in range(n)]


@given(seeds, st.floats(0.0, 1.0), st.integers(2, 5))
def test_questions_follow_the_calls_and_writes_take_no_turn(seed: int, write_share: float, turns: int) -> None:
    rng, calls, twin = random.Random(seed), Calls(random.Random(1), 9, turns), Calls(random.Random(1), 9, turns)
    shots = [_shot(rng, 9, write_share, i, calls) for i in range(60)]
    questions = [s.body["subject_id"] for s in shots if s.kind == "assemble"]
    assert questions == [subject(twin.member()) for _ in questions]


@pytest.mark.parametrize("bad", [{"subjects": 0}, {"turns": 0}, {"at_once": 0}])
def test_a_call_needs_someone_on_the_line(bad: dict[str, int]) -> None:
    args = {"subjects": 3, "turns": 2, "at_once": 4, **bad}
    with pytest.raises(ValueError):
        Calls(random.Random(0), **args)


def test_the_option_is_documented_with_its_calls_at_once() -> None:
    out = CliRunner().invoke(app, ["bench", "load", "--help"], env={"COLUMNS": "200"}).stdout
    assert "--turns" in out and f"{CALLS_AT_ONCE} calls" in out
    refused = CliRunner().invoke(app, ["bench", "load", "--turns", "0"])
    assert refused.exit_code == 2
