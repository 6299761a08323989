"""A pytest plugin that writes each test's CPU time: what the suite spends, test by test, on a machine
whose cores it fills (docs/benchmarks.md, "The suite's own CPU"). Off unless asked for:

    SUITE_CPU_DIR=/tmp/cpu PYTEST_ADDOPTS="-p tests.support.cpu_per_test" bash .ci/run

Each process (every xdist worker) appends to ``$SUITE_CPU_DIR/cpu-<worker>.tsv`` one line per test:
node id, CPU seconds of the worker itself, CPU seconds of the child processes it waited for during the
test (``carnet serve``, molecule, pip…: a child reaped later counts where it is reaped), wall seconds.
Summed per file: ``cat $SUITE_CPU_DIR/cpu-*.tsv | awk -F'\\t' '{split($1,a,"::"); c[a[1]]+=$2+$3}
END {for (f in c) print c[f], f}' | sort -rn | head``."""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Generator
from pathlib import Path
from typing import IO

import pytest

_out: IO[str] | None = None


def _cpu() -> tuple[float, float]:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def _file() -> IO[str] | None:
    global _out
    where = os.environ.get("SUITE_CPU_DIR")
    if _out is None and where:
        Path(where).mkdir(parents=True, exist_ok=True)
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        _out = (Path(where) / f"cpu-{worker}.tsv").open("a", encoding="utf-8", buffering=1)
    return _out


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    out = _file()
    own, children, wall = *_cpu(), time.monotonic()
    yield
    if out is not None:
        own_after, children_after = _cpu()
        out.write(f"{item.nodeid}\t{own_after - own:.2f}\t{children_after - children:.2f}"
                  f"\t{time.monotonic() - wall:.2f}\n")


def pytest_sessionfinish() -> None:
    global _out
    if _out is not None:
        _out.close()
        _out = None
