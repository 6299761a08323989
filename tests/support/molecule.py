"""Running the Ansible tools of this interpreter's bin directory (ansible-lint, ansible-playbook, molecule)
on the repository's collection, offline, with every cache in a temporary directory."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ANSIBLE = ROOT / "ansible"
COLLECTION = ANSIBLE / "ansible_collections" / "carnet" / "sovereign"
BIN = Path(sys.executable).parent


def ansible_environment(tmp_path: Path) -> dict[str, str]:
    """A whole environment: this checkout's collection only, HOME and every Ansible cache under ``tmp_path``."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(home),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "ANSIBLE_COLLECTIONS_PATH": str(ANSIBLE),
        "ANSIBLE_HOME": str(tmp_path / "ansible-home"),
        "ANSIBLE_LOCAL_TEMP": str(tmp_path / "ansible-tmp"),
        "ANSIBLE_NOCOLOR": "1",
        "NO_COLOR": "1",
        "LANG": "C.UTF-8",
        # Modules piped to the interpreter instead of copied to a temporary file first: about 8 % off the
        # time of the small tasks (128 tasks in the carnet scenario); the modules run the same either way.
        "ANSIBLE_PIPELINING": "True",
    }


def tool(name: str) -> Path:
    """``name`` beside this interpreter; the test fails (never skips) when the dev install lacks it."""
    exe = BIN / name
    if not exe.exists():
        pytest.fail(f"{name} is not installed, though the dev extra has it: run `pip install -e '.[dev]'`")
    return exe


def molecule(command: str, scenario: str, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    """``molecule COMMAND --scenario-name SCENARIO`` from the collection's directory, output captured.

    Molecule runs in a session of its own: when the test ends early (``timeout``, pytest-timeout, ^C),
    the whole group is killed, so no ansible-playbook or ``carnet serve`` it started runs on."""
    proc = subprocess.Popen(
        [str(tool("molecule")), command, "--scenario-name", scenario],
        cwd=COLLECTION,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # An operator's umask, not the one Carnet gave this test process (bootstrap.build restricts the
        # umask of the process it runs in): the role's venv and scripts must be readable by the service user.
        umask=0o022,
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
