"""`carnet serve` with its model in a child process (its default, ``CARNET_EMBED_PROCESS`` unset): the
whole write and read path works, the child runs at a lower priority, and it ends with the server;
``CARNET_EMBED_PROCESS=false`` keeps the model in the server's process."""

from __future__ import annotations

import os
import time
from pathlib import Path

import httpx
import pytest

from carnet.bench.served import child_pids
from carnet.bootstrap.stores import build_control_plane
from carnet.services.apikeys import create_key
from carnet.settings.root import Settings
from tests.support.serve import serve_process


def _is_embedder(pid: int) -> bool:
    try:
        return b"multiprocessing" in Path(f"/proc/{pid}/cmdline").read_bytes() and \
            b"resource_tracker" not in Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return False


def _agent(tmp_path: Path) -> dict[str, str]:
    plane = build_control_plane(Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys"))
    try:
        key = create_key(plane.catalog, plane.pepper, tenant="assur-nord", roles=["agent"])[0]
    finally:
        plane.catalog.close()
    return {"Authorization": f"Bearer {key}"}


@pytest.mark.slow
def test_serve_runs_the_model_in_its_own_process_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = _agent(tmp_path)
    monkeypatch.delenv("CARNET_EMBED_PROCESS", raising=False)  # the server inherits this environment
    with serve_process(tmp_path, {}) as (base, proc):
        _write_search_assemble(base, agent)
        embedders = [c for c in child_pids(proc.pid) if _is_embedder(c)]
        assert len(embedders) == 1
        child = embedders[0]
        assert os.getpriority(os.PRIO_PROCESS, child) >= min(19, os.getpriority(os.PRIO_PROCESS, proc.pid) + 10)
    assert proc.returncode is not None
    deadline = time.monotonic() + 10
    while not _gone(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _gone(child)


@pytest.mark.slow
def test_serve_keeps_the_model_in_process_when_told(tmp_path: Path) -> None:
    agent = _agent(tmp_path)
    with serve_process(tmp_path, {"CARNET_EMBED_PROCESS": "false"}) as (base, proc):
        _write_search_assemble(base, agent)
        assert [c for c in child_pids(proc.pid) if _is_embedder(c)] == []


def _write_search_assemble(base: str, agent: dict[str, str]) -> None:
    """A memory written, found by a question and assembled: passages and questions through the model."""
    made = httpx.post(f"{base}/api/v1/subjects/ADH-1/memories", headers=agent, timeout=30,
                      json={"text": "Le membre habite 12 rue des Lilas à Lyon."})
    assert made.status_code == 201, made.text
    found = httpx.post(f"{base}/api/v1/subjects/ADH-1/search", headers=agent, timeout=30,
                       json={"query": "Où habite-t-il ?", "k": 3})
    assert found.status_code == 200 and "Lilas" in found.json()["results"][0]["memory"]["text"]
    ctx = httpx.post(f"{base}/api/v1/context/assemble", headers=agent, timeout=30,
                     json={"subject_id": "ADH-1", "query": "adresse ?"})
    assert ctx.status_code == 200 and "Lilas" in ctx.text, ctx.text


def _gone(pid: int) -> bool:
    """Exited (a zombie waiting for init to reap it counts: it holds no memory and runs nothing)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return True
    return state in ("Z", "X")
