"""`carnet bench load`'s CPU readings on real processes: this one, one that is gone, a server and its child."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from carnet.bench import cpu
from carnet.bench.cpu import per_request


def test_this_process_cpu_grows_as_it_works() -> None:
    before = cpu.cpu_seconds(os.getpid())
    deadline = time.process_time() + 0.3
    while time.process_time() < deadline:
        pass
    after = cpu.cpu_seconds(os.getpid())
    assert before is not None and after is not None and after - before >= 0.2


def test_a_process_that_is_gone_has_no_cpu_time() -> None:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    assert cpu.cpu_seconds(int(proc.stdout)) is None


def test_a_server_and_its_busy_child_are_read_apart() -> None:
    # A "server" whose child burns CPU for a second: the child's time shows under children, not the server's.
    burn = "import time\nt = time.time() + 30\nwhile time.time() < t: pass"
    code = f"import subprocess, sys, time; c = subprocess.Popen([sys.executable, '-c', {burn!r}]); time.sleep(30)"
    server = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    try:
        time.sleep(0.5)
        before = cpu.read(server.pid)
        time.sleep(1.0)
        after = cpu.read(server.pid)
    finally:
        os.killpg(server.pid, signal.SIGKILL)  # the child too
        server.wait()
    shares = per_request(before, after, served=10, cores=os.cpu_count() or 1)
    assert len(after.children) == 1
    assert shares["children_ms"] > 50  # about 100 ms a request: one busy core over 1 s, 10 requests
    assert shares["server_ms"] < 5  # asleep
    assert 0.5 < shares["cores_busy"] < 1.5
