"""``bench.served.listening``: whether the server a benchmark started holds its port, or another process
took the free port first (whose ``/healthz`` would answer in its place: a CI run saw 401s from it)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from carnet.bench.served import listening
from carnet.entrypoints.http.server import free_port


def test_a_listening_socket_is_found_in_its_own_process_only() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        assert not listening(port, os.getpid())  # bound, not listening
        s.listen()
        assert listening(port, os.getpid())
    assert not listening(port, os.getpid())


def test_another_process_on_the_port_is_not_ours() -> None:
    port = free_port()
    code = ("import socket, sys, time\ns = socket.socket(); s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen()\n"
            "print('up', flush=True); time.sleep(30)")
    other = subprocess.Popen([sys.executable, "-c", code, str(port)], stdout=subprocess.PIPE, text=True)
    ours = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])  # the server that lost the race
    try:
        assert other.stdout is not None and other.stdout.readline().strip() == "up"
        assert listening(port, other.pid)
        assert not listening(port, ours.pid)
    finally:
        for p in (other, ours):
            p.kill()
            p.communicate()
