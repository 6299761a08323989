"""``carnet bench``'s memory figures: the server's own resident memory and its child processes' (the
model runs in one by default), read from /proc."""

from __future__ import annotations

import os
import subprocess
import sys

from carnet.bench.served import rss_bytes


def test_a_processs_children_are_counted_apart_from_it() -> None:
    alone = rss_bytes(os.getpid())
    assert alone["serve_rss_bytes"] > 0 and alone["serve_peak_rss_bytes"] >= alone["serve_rss_bytes"]
    child = subprocess.Popen([sys.executable, "-c", "import sys; print('up', flush=True); sys.stdin.read()"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None and child.stdout.readline() == b"up\n"  # its interpreter is loaded
        with_child = rss_bytes(os.getpid())
        assert with_child["serve_children_rss_bytes"] >= alone["serve_children_rss_bytes"] + 1_000_000
    finally:
        child.communicate(b"")


def test_a_process_that_is_gone_reports_nothing() -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    assert rss_bytes(gone.pid) == {}
