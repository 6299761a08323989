"""The suite's CPU plugin (tests/support/cpu_per_test.py): one line per test, a child's CPU counted apart."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_each_test_gets_a_line_with_its_own_and_its_childrens_cpu(tmp_path: Path) -> None:
    (tmp_path / "test_sample.py").write_text(
        "import subprocess, sys\n"
        "def test_spins():\n"
        "    n = 0\n"
        "    while n < 3_000_000:\n"
        "        n += 1\n"
        "def test_child():\n"
        "    subprocess.run([sys.executable, '-c', 'n = 0\\nwhile n < 3_000_000: n += 1'], check=True)\n"
        "def test_idle():\n"
        "    pass\n")
    out = tmp_path / "cpu"
    env = {**os.environ, "SUITE_CPU_DIR": str(out), "PYTHONPATH": str(ROOT), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("PYTEST_XDIST_WORKER", None)  # the inner session is not one of this run's workers
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                           "tests.support.cpu_per_test", "test_sample.py"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {line.split("\t")[0]: [float(x) for x in line.split("\t")[1:]]
            for line in (out / "cpu-main.tsv").read_text().splitlines()}
    spins, child, idle = (rows[f"test_sample.py::{name}"] for name in ("test_spins", "test_child", "test_idle"))
    assert spins[0] > 0.05 and spins[1] == 0.0
    assert child[1] > 0.05 and child[1] > child[0]
    assert idle[0] < spins[0] and idle[1] == 0.0
    assert all(r[2] >= 0 for r in rows.values())
