"""With an LLM configured, explicit memories written through REST and MCP get the model's contradiction
judgment where reconcile's judge was unsure, as intakes do (the vLLM stand-in answers); confident cases
and writes without an LLM call no model. The judge here is a file that leaves every pair uncertain
(``tests/support/judges.py``), so what is tested is the cascade, not the learned weights."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client

from carnet.bootstrap.container import Container
from carnet.bootstrap.wiring import build
from carnet.domain.records import Status
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.server import running
from carnet.entrypoints.mcp import build_server
from carnet.entrypoints.mcp.auth import with_key
from carnet.ports import Embedder
from carnet.services.apikeys import create_key
from carnet.services.scope import scope_for
from carnet.settings.root import Settings
from tests.support.judges import always_uncertain, never_uncertain
from tests.support.vllm_server import VllmStandIn, answer, serving, unguided

CAR = "Le membre roule en Peugeot 208, assurée tous risques."
SOLD = "Le membre a vendu sa voiture et n'a plus de véhicule."  # no slot or value the rules know


@pytest.fixture
def llm(tmp_path: Path, embedder: Embedder) -> Iterator[tuple[VllmStandIn, Container]]:
    yield from _with_llm(tmp_path, embedder, always_uncertain(tmp_path))


@pytest.fixture
def confident(tmp_path: Path, embedder: Embedder) -> Iterator[tuple[VllmStandIn, Container]]:
    yield from _with_llm(tmp_path, embedder, never_uncertain(tmp_path))


def _with_llm(tmp_path: Path, embedder: Embedder, judge: Path) -> Iterator[tuple[VllmStandIn, Container]]:
    stand_in = VllmStandIn()
    with serving(stand_in) as base:
        settings = Settings(
            data_dir=tmp_path / "data",
            key_dir=tmp_path / "keys",
            judge_path=judge,
            extractor="mistral",
            llm={
                "base_url": base,
                "api_key": stand_in.api_key,
                "model": stand_in.served_model,
                "timeout": 5,
                "max_retries": 0,
            },
        )
        c = build(settings, embedder=embedder)
        try:
            yield stand_in, c
        finally:
            c.close()
    assert not stand_in.problems


def _rest(c: Container) -> Any:
    key, _ = create_key(c.deps.catalog, c.pepper, tenant="assur-nord", roles=["agent", "dpo"])
    return key


def test_rest_write_is_judged_by_the_llm(llm: tuple[VllmStandIn, Container]) -> None:
    stand_in, c = llm
    with (
        running(create_app(c)) as base,
        httpx.Client(base_url=base, timeout=30, headers={"Authorization": f"Bearer {_rest(c)}"}) as http,
    ):
        url = "/api/v1/subjects/ADH-J1/memories"
        car = http.post(url, json={"text": CAR}).json()
        assert car["action"] == "created" and not stand_in.requests  # nothing to judge against yet
        stand_in.push(answer({"obsolete_ids": ["1"]}))
        sold = http.post(url, json={"text": SOLD}).json()
        assert sold["action"] == "superseded" and sold["superseded"] == [car["memory"]["id"]]
        judged = stand_in.requests[-1].user
        assert "Peugeot 208" in judged and car["memory"]["id"] not in judged  # numbers, never record ids
        old = http.get(f"{url}/{car['memory']['id']}").json()
        assert old["status"] == "superseded" and old["superseded_by"] == sold["memory"]["id"]
        history = http.get(f"{url}/{car['memory']['id']}/history").json()["history"]
        assert history[-1]["detail"] == {"by": sold["memory"]["id"], "rule": "llm"}


def test_a_model_that_keeps_everything_supersedes_nothing(llm: tuple[VllmStandIn, Container]) -> None:
    stand_in, c = llm
    with (
        running(create_app(c)) as base,
        httpx.Client(base_url=base, timeout=30, headers={"Authorization": f"Bearer {_rest(c)}"}) as http,
    ):
        url = "/api/v1/subjects/ADH-J2/memories"
        http.post(url, json={"text": CAR})
        stand_in.push(answer({"obsolete_ids": []}))
        assert (
            http.post(url, json={"text": "Le membre a aussi une assurance habitation."}).json()["action"] == "created"
        )
        stand_in.push(unguided("pas du JSON"))  # a failed judgment: the write stands, as the rules left it
        r = http.post(url, json={"text": SOLD})
        assert r.status_code == 201 and r.json()["action"] == "created"
        assert len(http.get(url).json()["items"]) == 3


def test_mcp_write_is_judged_by_the_llm(llm: tuple[VllmStandIn, Container]) -> None:
    stand_in, c = llm
    key, _ = create_key(c.deps.catalog, c.pepper, tenant="assur-nord", roles=["agent"])
    server = build_server(c.facade, principal=with_key(c, key))
    out: dict[str, Any] = {}

    async def main() -> None:
        async with Client(server) as client:
            first = await client.call_tool("remember", {"subject_id": "ADH-J3", "text": CAR})
            stand_in.push(answer({"obsolete_ids": ["1"]}))
            second = await client.call_tool("remember", {"subject_id": "ADH-J3", "text": SOLD})
            out["first"], out["second"] = first.structured_content, second.structured_content

    anyio.run(main)
    assert out["second"]["action"] == "superseded"
    assert out["second"]["superseded"] == [out["first"]["memory"]["id"]]


def test_without_an_llm_no_model_judges_explicit_writes(container: Container) -> None:
    assert container.facade.judge is None


def test_a_write_the_judge_is_sure_of_never_calls_the_llm(confident: tuple[VllmStandIn, Container]) -> None:
    """The cascade: with no candidate in the judge's uncertain band, the model is never asked."""
    stand_in, c = confident
    with (
        running(create_app(c)) as base,
        httpx.Client(base_url=base, timeout=30, headers={"Authorization": f"Bearer {_rest(c)}"}) as http,
    ):
        url = "/api/v1/subjects/ADH-J4/memories"
        assert http.post(url, json={"text": CAR}).json()["action"] == "created"
        assert http.post(url, json={"text": SOLD}).json()["action"] == "created"
    assert not stand_in.requests


def test_a_late_note_the_llm_says_is_out_of_date_is_stored_closed(llm: tuple[VllmStandIn, Container]) -> None:
    """Time order, not arrival order, in the cascade too: the June sale is written first, the January car
    after it. The judge is unsure; the model is shown the newer note as the one that may retire the late one
    and names it, so the car is stored already superseded by the sale, and assemble's facts hold the sale
    alone. The model saying no leaves the late note current."""
    stand_in, c = llm
    with (
        running(create_app(c)) as base,
        httpx.Client(base_url=base, timeout=30, headers={"Authorization": f"Bearer {_rest(c)}"}) as http,
    ):
        url = "/api/v1/subjects/ADH-J5/memories"
        sold = http.post(url, json={"text": SOLD, "occurred_at": "2025-06-02T10:00:00+02:00"}).json()
        stand_in.push(answer({"obsolete_ids": ["1"]}))
        car = http.post(url, json={"text": CAR, "occurred_at": "2025-01-15T10:00:00+01:00"}).json()
        asked = stand_in.requests[-1].user
        assert "Peugeot 208" in asked and "vendu" in asked
        stored = http.get(f"{url}/{car['memory']['id']}").json()
        assert stored["status"] == "superseded" and stored["superseded_by"] == sold["memory"]["id"]
        history = http.get(f"{url}/{car['memory']['id']}/history").json()["history"]
        assert history[-1]["detail"] == {"by": sold["memory"]["id"], "rule": "llm"}
        assert [m["id"] for m in http.get(url).json()["items"] if m["status"] == "active"] == [sold["memory"]["id"]]

        other = "/api/v1/subjects/ADH-J6/memories"
        http.post(other, json={"text": SOLD, "occurred_at": "2025-06-02T10:00:00+02:00"})
        stand_in.push(answer({"obsolete_ids": []}))
        kept = http.post(other, json={"text": CAR, "occurred_at": "2025-01-15T10:00:00+01:00"}).json()
        assert http.get(f"{other}/{kept['memory']['id']}").json()["status"] == "active"


def test_a_failed_judgment_contests_only_what_says_a_state_changed(llm: tuple[VllmStandIn, Container]) -> None:
    """The LLM is asked about every pair of the judge's band, but until it answers (and when its call fails)
    the write stands as the judge alone leaves it: a note only alike to the record ("aussi une assurance
    habitation": no value, cue or topic says a state changed) does not rank it after itself; a note that says
    the car is gone does."""
    stand_in, c = llm
    with (
        running(create_app(c)) as base,
        httpx.Client(base_url=base, timeout=30, headers={"Authorization": f"Bearer {_rest(c)}"}) as http,
    ):
        stories: dict[str, tuple[str, str]] = {}
        for subject, newer in (("ADH-J7", "Le membre a aussi une assurance habitation."), ("ADH-J8", SOLD)):
            url = f"/api/v1/subjects/{subject}/memories"
            car = http.post(url, json={"text": CAR}).json()["memory"]["id"]
            stand_in.push(unguided("pas du JSON"))  # the judgment fails: logged, the write stands
            r = http.post(url, json={"text": newer})
            assert r.status_code == 201 and r.json()["action"] == "created"
            stories[subject] = (car, r.json()["memory"]["id"])
        assert len(stand_in.requests) == 2  # both pairs were in the band: the LLM was asked about each
    for subject, contested in (("ADH-J7", False), ("ADH-J8", True)):
        car, newer = stories[subject]
        [stored] = c.deps.index.get(scope_for(c.deps, "assur-nord", subject), [car])
        assert stored.status is Status.ACTIVE and stored.contested_by == ((newer,) if contested else ())
