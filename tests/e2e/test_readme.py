"""The README, as a newcomer types it (issue 50): every command it shows, run against a demo server
started as ``scripts/run.sh`` starts it (``.venv/bin/carnet serve --demo``, in a directory of its own that
holds ``.venv``, so that ``./carnet-demo`` and ``.venv/bin/carnet`` mean what they mean in a checkout).

The README's sample of what the demo prints is compared with what it prints (the address, the member,
the console, the command for another key); the ``bash`` blocks run as one script, the ``python`` blocks
as files, the ``json`` block's MCP settings are used by the MCP SDK's client, and the commands shown
inline (``.venv/bin/…``) run too. Only ``crn_...`` (the key the demo printed) and the port (the test's
own, not 8080) are replaced, as a person replaces the placeholder. ``scripts/run.sh`` and
``scripts/test.sh`` are checked, not run: the first installs the venv this test uses and then runs the
server this test runs; the second runs this test."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from carnet.entrypoints.http.server import free_port
from carnet.entrypoints.mcp.tools import TOOLS
from tests.support.serve import stop

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()
PLACEHOLDER = "crn_..."
_BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.DOTALL)


def blocks(language: str) -> list[str]:
    return [body for lang, body in _BLOCK.findall(README) if lang == language]


@dataclass
class Demo:
    root: Path
    port: int
    key: str  # the last key the demo printed
    shown: list[str]  # the lines it printed last, at the moment they were complete
    log: Path

    def typed(self, text: str) -> str:
        """``text`` as a person types it from the README: their key, and this server's port."""
        return text.replace(PLACEHOLDER, self.key).replace("127.0.0.1:8080", f"127.0.0.1:{self.port}")

    def run(self, *cmd: str, env: dict[str, str] | None = None,
            timeout: float = 180) -> subprocess.CompletedProcess[str]:
        return subprocess.run(cmd, cwd=self.root, env={**_env(), **(env or {})}, capture_output=True, text=True,
                              timeout=timeout, check=False)


def _env() -> dict[str, str]:
    """The environment of a shell in the checkout: no ``CARNET_*`` of the test session's."""
    return {k: v for k, v in os.environ.items() if not k.startswith("CARNET_")}


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    root = tmp_path_factory.mktemp("checkout")
    (root / ".venv").symlink_to(REPO / ".venv")
    port, log = free_port(), root / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([".venv/bin/carnet", "serve", "--demo", "--port", str(port)], cwd=root,
                                env=_env(), stdout=out, stderr=subprocess.STDOUT)
    try:
        shown = _until_the_request_is_shown(log, proc)
        key = shown[shown.index(next(line for line in shown if line.startswith("Clé de démo"))) + 1]
        yield Demo(root, port, key, shown, log)
    finally:
        stop(proc)  # type: ignore[arg-type]  # a text-less Popen: stop() only waits and signals


def _until_the_request_is_shown(log: Path, proc: subprocess.Popen[bytes], timeout: float = 300) -> list[str]:
    """The log's lines once the last one the demo prints (the request to paste) is there."""
    deadline = time.monotonic() + timeout
    while True:
        lines = log.read_text(errors="replace").splitlines()
        if lines and lines[-1].startswith("curl -fsS"):
            return lines
        assert proc.poll() is None, "\n".join(lines[-30:])
        assert time.monotonic() < deadline, "\n".join(lines[-30:])
        time.sleep(0.2)  # polling the log, with the deadline above


def test_the_demo_prints_what_the_readme_says_and_what_to_type_last(demo: Demo) -> None:
    sample = [demo.typed(line) for line in blocks("text")[0].splitlines()]
    assert demo.shown[-len(sample):] == sample  # the README's sample is the demo's output, and it is last
    request = demo.run("bash", "-c", demo.shown[-1])  # the request to paste, pasted as printed
    assert request.returncode == 0, request.stderr
    assert "Villeurbanne" in json.loads(request.stdout)["prompt"]


def test_the_two_commands_and_ci(demo: Demo) -> None:
    first = blocks("bash")[0]
    assert [line.split()[0] for line in first.splitlines()] == ["scripts/run.sh", "scripts/test.sh"]
    for script in ("scripts/run.sh", "scripts/test.sh", ".ci/run"):
        assert os.access(REPO / script, os.X_OK), script
    assert "exec .venv/bin/carnet serve --demo" in (REPO / "scripts/run.sh").read_text()  # what `demo` runs
    assert "bash scripts/test.sh" in (REPO / ".ci/run").read_text()


def test_every_shell_python_and_inline_command_runs_as_shown(demo: Demo) -> None:
    script = "\n".join(demo.typed(b) for b in blocks("bash")[1:])
    shell = demo.run("bash", "-euo", "pipefail", "-c", script)
    assert shell.returncode == 0, shell.stdout[-2000:] + shell.stderr[-2000:]
    sdk, mcp_client = blocks("python")
    (demo.root / "try_sdk.py").write_text(demo.typed(sdk))  # the name the README gives it
    (demo.root / "try_mcp.py").write_text(demo.typed(mcp_client))
    env = {"KEY": demo.key}  # as `export KEY=...` left it in the reader's shell
    inline = [demo.typed(c) for c in re.findall(r"`(\.venv/bin/[^`]+)`", README)]
    assert ".venv/bin/python try_sdk.py" in inline and ".venv/bin/carnet mcp --help" in inline
    for command in inline:
        done = demo.run("bash", "-c", command, env=env)
        assert done.returncode == 0, (command, done.stderr[-2000:])
        if "mcp --help" in command:
            assert all(name in done.stdout for name in TOOLS), done.stdout
        if "try_sdk" in command:
            assert "bris de glace" in done.stdout
    ran = demo.run(".venv/bin/python", "try_mcp.py", env=env)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert all(name in ran.stdout for name in TOOLS) and "Villeurbanne" in ran.stdout


def test_the_mcp_settings_shown_work_with_the_sdks_client(demo: Demo) -> None:
    server = json.loads(demo.typed(blocks("json")[0]))["mcpServers"]["carnet"]
    assert server["type"] == "http"

    async def names() -> set[str]:
        async with httpx2.AsyncClient(headers=server["headers"], timeout=30) as http, Client(
                streamable_http_client(server["url"], http_client=http)) as client:
            return {t.name for t in (await client.list_tools()).tools}

    assert anyio.run(names) == set(TOOLS)


def test_a_key_made_for_another_store_is_explained_and_the_hints_run_as_printed(demo: Demo) -> None:
    made = demo.run(".venv/bin/carnet", "apikey", "create", "--tenant", "demo-mutuelle", "--role", "agent")
    assert made.returncode == 0, made.stderr
    assert "no store at ./carnet-data" in made.stderr and "./carnet-demo" in made.stderr
    wrong = made.stdout.strip().splitlines()[-1]
    answer = httpx.get(f"http://127.0.0.1:{demo.port}/api/v1/procedures", headers={"Authorization": f"Bearer {wrong}"})
    assert answer.status_code == 401 and "store" in answer.json()["error"]["message"]
    logged = [line for line in demo.log.read_text().splitlines() if "api_key_unknown" in line]
    assert logged and "the store ./carnet-demo" in logged[-1]
    for hint in (made.stderr.split("scripts/run.sh), whose store is ./carnet-demo: ")[1].strip(),
                 logged[-1].split("a key for this store: ")[1].split("'")[0].replace("<tenant>", "demo-mutuelle"),
                 next(line for line in demo.shown if "apikey create" in line).split(" : ")[-1]):
        again = demo.run("bash", "-c", hint)
        assert again.returncode == 0, (hint, again.stderr)
        key = again.stdout.strip().splitlines()[-1]
        works = httpx.get(f"http://127.0.0.1:{demo.port}/api/v1/procedures",
                          headers={"Authorization": f"Bearer {key}"})
        assert works.status_code == 200, (hint, works.text)


def test_the_storys_own_requests_never_reach_the_log(demo: Demo) -> None:
    listed = demo.run(".venv/bin/carnet", "apikey", "list", "--data-dir", "./carnet-demo")
    story = [json.loads(line) for line in listed.stdout.splitlines() if '"name": "demo"' in line]
    assert len(story) == 1, listed.stdout
    assert f"key_id={story[0]['key_id']}" not in demo.log.read_text()
