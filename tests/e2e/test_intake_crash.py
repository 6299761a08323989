"""kill -9 `carnet serve` while it is extracting an intake (the model is slow to answer); after a
restart the intake completes, once: its memories exist, and exactly once each.

The LLM is the vLLM stand-in (tests/support/vllm_server.py) with the real `mistralai` SDK: the first
answer hangs, the server is killed meanwhile; the restarted server takes the intake over when the dead
process's lease expires, and gets the answer at once."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import httpx
import pytest

from carnet.bootstrap.stores import build_control_plane
from carnet.services.apikeys import create_key
from carnet.settings.root import Settings
from tests.support.serve import serve_process
from tests.support.vllm_server import VllmStandIn, answer, serving

FACTS = {"facts": [
    {"text": "Le membre a déclaré un dégât des eaux dans sa cuisine.", "category": "sinistre", "importance": 4,
     "valid_from": "2026-11-29", "worth_remembering": True, "about": "membre"},
    {"text": "Un expert passera jeudi chez le membre.", "category": "decision", "importance": 4,
     "valid_from": None, "worth_remembering": True, "about": "membre"}],
    "summary": "Déclaration d'un dégât des eaux ; expert jeudi."}
BODY = {"session_id": "call-7", "messages": [
    {"role": "user", "content": "J'ai un dégât des eaux dans la cuisine.", "at": "2026-11-29T09:12:00+01:00"},
    {"role": "advisor", "content": "Je déclare le sinistre, un expert passera jeudi.",
     "at": "2026-11-29T09:13:00+01:00"}]}


def _key(root: Path) -> str:
    plane = build_control_plane(Settings(data_dir=root / "data", key_dir=root / "keys"))
    try:
        return create_key(plane.catalog, plane.pepper, tenant="assur-nord", roles=["agent"])[0]
    finally:
        plane.catalog.close()


@pytest.mark.slow
def test_kill_9_mid_extraction_then_restart_completes_exactly_once(tmp_path: Path) -> None:
    stand_in = VllmStandIn()
    stand_in.push(answer(FACTS, delay=60))  # the first call hangs: the server is killed meanwhile
    key = _key(tmp_path)
    auth = {"Authorization": f"Bearer {key}"}
    with serving(stand_in) as llm:
        env = {"CARNET_EXTRACTOR": "mistral", "CARNET_LLM__BASE_URL": llm,
               "CARNET_LLM__API_KEY": stand_in.api_key or "", "CARNET_LLM__MODEL": stand_in.served_model,
               "CARNET_LLM__TIMEOUT": "90", "CARNET_WORKERS__LEASE_SECONDS": "5",
               # Every call to the model: the shipped turn filter keeps no turn of this two-turn call (each
               # is the call's opening and closing), and this test is about the worker, not the gate.
               "CARNET_LLM__GATE": "false"}
        with serve_process(tmp_path, env, log_name="serve-1.log") as (base, proc):
            iid = httpx.post(f"{base}/api/v1/subjects/ADH-77/messages", json=BODY, headers=auth).json()["intake_id"]
            deadline = time.monotonic() + 60
            while not stand_in.requests and time.monotonic() < deadline:
                time.sleep(0.05)
            assert stand_in.requests, "the worker never called the model"
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        stand_in.push(answer(FACTS))
        with serve_process(tmp_path, env, log_name="serve-2.log") as (base, _), httpx.Client(
                base_url=base, headers=auth, timeout=30) as http:
            status = http.get(f"/api/v1/intakes/{iid}").json()
            deadline = time.monotonic() + 60
            while status["status"] != "done" and time.monotonic() < deadline:
                status = http.get(f"/api/v1/intakes/{iid}", params={"wait": "true", "timeout": 5}).json()
            assert status["status"] == "done", status
            assert status["attempts"] == 2 and len(status["memory_ids"]) == 3  # two facts and the episode
            listed = http.get("/api/v1/subjects/ADH-77/memories", params={"status": "any"}).json()["items"]
            assert sorted(m["id"] for m in listed) == sorted(status["memory_ids"])
            texts = [m["text"] for m in listed]
            assert len(texts) == len(set(texts)) == 3
    assert len(stand_in.requests) == 2 and not stand_in.problems
