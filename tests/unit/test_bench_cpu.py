"""`carnet bench load`'s CPU per request: reading /proc, and the arithmetic of the shares."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from carnet.bench import cpu
from carnet.bench.cpu import Reading, per_request, stat_cpu_seconds

TICKS = os.sysconf("SC_CLK_TCK")


@given(comm=st.text(alphabet=st.characters(blacklist_characters="\x00\n"), max_size=15),
       utime=st.integers(0, 10**9), stime=st.integers(0, 10**9))
def test_a_stat_line_is_read_after_the_last_bracket_whatever_the_command_name(comm: str, utime: int,
                                                                              stime: int) -> None:
    # Fields 3 to 13 are state, ppid, pgrp, session, tty, tpgid, flags and four fault counts.
    line = f"4242 ({comm}) S 1 4242 4242 0 -1 4194560 100 0 0 0 {utime} {stime} 0 0 20 0 3 0 12345\n"
    assert stat_cpu_seconds(line) == pytest.approx((utime + stime) / TICKS)


@given(gen=st.floats(0, 100), server=st.floats(0, 100), kids=st.dictionaries(st.integers(1, 50), st.floats(0, 100)),
       spent=st.tuples(st.floats(0, 10), st.floats(0, 10)), new=st.dictionaries(st.integers(51, 60), st.floats(0, 10)),
       served=st.integers(0, 1000), cores=st.integers(1, 64), wall=st.floats(0.1, 100))
def test_shares_add_up_and_nothing_is_negative(gen: float, server: float, kids: dict[int, float],
                                               spent: tuple[float, float], new: dict[int, float], served: int,
                                               cores: int, wall: float) -> None:
    before = Reading(0.0, gen, server, kids)
    grown = {pid: s + spent[1] for pid, s in kids.items()}
    after = Reading(wall, gen + spent[0], server + spent[0], {**grown, **new})  # some children started since
    out = per_request(before, after, served, cores)
    children = spent[1] * len(kids) + sum(new.values())
    assert out["cores_busy"] == pytest.approx((2 * spent[0] + children) / wall, abs=0.01)
    if served == 0:
        assert out["server_ms"] is None and out["cpu_bound_per_s"] is None
        return
    assert out["server_ms"] == pytest.approx(spent[0] * 1000 / served, abs=0.01)
    assert out["children_ms"] == pytest.approx(children * 1000 / served, abs=0.01)
    assert out["generator_ms"] == pytest.approx(spent[0] * 1000 / served, abs=0.01)
    if spent[0] + children >= 1 / TICKS:
        assert out["cpu_bound_per_s"] == pytest.approx(cores * served / (spent[0] + children), rel=0.01, abs=0.1)
    else:
        assert out["cpu_bound_per_s"] is None


def test_without_a_server_only_the_generator_is_known() -> None:
    out = per_request(Reading(0.0, 1.0), Reading(2.0, 1.5), served=50, cores=2)
    assert out == {"served": 50, "seconds": 2.0, "cores": 2, "generator_ms": 10.0, "cores_busy": 0.25}
    assert "server" not in cpu.line(out) and "this generator 10.0 ms" in cpu.line(out)


def test_the_printed_line_names_each_share_and_the_bound() -> None:
    out = per_request(Reading(0.0, 0.0, 0.0, {7: 0.0}), Reading(1.0, 0.1, 0.5, {7: 0.7}), served=50, cores=2)
    assert cpu.line(out) == ("    cpu per answered request: server 10.0 ms, its children 14.0 ms, this generator "
                             "2.0 ms; 1.3 of 2 cores busy; at that cost 2 cores serve at most 83.3/s")
