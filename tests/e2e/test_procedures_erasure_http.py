"""Issue 46, finding 1, over real HTTP: a team procedure read from a member's call is that member's
data until a person adopts it. It keeps the member's keyed hash, is deleted with the member by
``DELETE /api/v1/subjects/{id}`` whatever its status (proposed or approved), the receipt says so,
its text leaves the catalog file and its WAL, and another member's ``assemble`` no longer shows it.
A procedure a supervisor typed, or adopted by proposing the same text, stays."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from carnet.bootstrap.container import Container
from carnet.bootstrap.wiring import start_workers
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.server import running
from carnet.services.apikeys import create_key

MEMBER, OTHER = "ADH-4601", "ADH-4602"
MARKER = "zorglubesque"  # a word of the member's call that must leave every file with the member
WATER = f"Pour un dégât des eaux, on demande toujours des photos {MARKER} avant d'envoyer l'expert."
CANCEL = "Pour une résiliation, on propose toujours un rendez-vous avec un conseiller."
TYPED = {"text": "Pour un vol, toujours demander le dépôt de plainte.", "applies_when": ["vol"]}


@pytest.fixture
def http(container: Container) -> Iterator[dict[str, httpx.Client]]:
    start_workers(container)  # the configured extractor: rules, no LLM
    keys = {role: create_key(container.deps.catalog, container.pepper, tenant="assur-nord", roles=[role])[0]
            for role in ("agent", "supervisor", "dpo")}
    with running(create_app(container)) as base:
        clients = {n: httpx.Client(base_url=base, headers={"Authorization": f"Bearer {k}"}, timeout=30)
                   for n, k in keys.items()}
        try:
            yield clients
        finally:
            for c in clients.values():
                c.close()


def _call(agent: httpx.Client, member: str, *advisor: str) -> None:
    messages = [{"role": "user", "content": "J'ai une fuite sous l'évier et je veux résilier.",
                 "at": "2026-11-29T09:12:00+01:00"}]
    messages += [{"role": "advisor", "content": text, "at": "2026-11-29T09:13:00+01:00"} for text in advisor]
    r = agent.post(f"/api/v1/subjects/{member}/messages", json={"session_id": "call-1", "messages": messages})
    assert r.status_code == 202, r.text
    done = agent.get(f"/api/v1/intakes/{r.json()['intake_id']}", params={"wait": "true", "timeout": 20}).json()
    assert done["status"] == "done", done


def _proposed(sup: httpx.Client) -> dict[str, str]:
    return {p["text"]: p["id"] for p in sup.get("/api/v1/procedures", params={"status": "proposed"}).json()["items"]}


def _team(agent: httpx.Client, member: str) -> list[str]:
    ctx = agent.post("/api/v1/context/assemble", json={"subject_id": member, "query": "une fuite, un dégât des eaux"})
    assert ctx.status_code == 200, ctx.text
    return [t["id"] for t in ctx.json()["team_procedures"]]


def _files_holding(root: Path, needle: bytes) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and needle in p.read_bytes())


def test_a_procedure_read_from_a_members_call_is_erased_with_the_member(
        http: dict[str, httpx.Client], container: Container) -> None:
    agent, sup, dpo = http["agent"], http["supervisor"], http["dpo"]
    _call(agent, MEMBER, WATER, CANCEL)
    proposed = _proposed(sup)
    assert set(proposed) == {WATER, CANCEL}
    water, cancel = proposed[WATER], proposed[CANCEL]
    typed = sup.post("/api/v1/procedures", json=TYPED).json()["id"]
    for pid in (water, typed):
        assert sup.post(f"/api/v1/procedures/{pid}/approve").json()["status"] == "approved"
    assert agent.post(f"/api/v1/subjects/{OTHER}/memories", json={"text": "Le membre a une fuite."}).status_code == 201
    assert water in _team(agent, OTHER)  # approved: in another member's context

    receipt = dpo.delete(f"/api/v1/subjects/{MEMBER}")
    assert receipt.status_code == 200, receipt.text
    for pid in (water, cancel):
        assert sup.get(f"/api/v1/procedures/{pid}").status_code == 404
    assert [p["id"] for p in sup.get("/api/v1/procedures").json()["items"]] == [typed]
    assert water not in _team(agent, OTHER)
    assert _files_holding(container.settings.data_dir, MARKER.encode()) == []  # catalog file and WAL included
    body = receipt.json()
    assert body["complete"] is True and body["residue"] == []
    assert body["procedures_deleted"] == 2 and body["verified"]["derived_procedures_gone"] is True


def test_a_supervisor_who_proposes_the_same_text_adopts_it(http: dict[str, httpx.Client]) -> None:
    agent, sup, dpo = http["agent"], http["supervisor"], http["dpo"]
    _call(agent, MEMBER, CANCEL)
    [pid] = _proposed(sup).values()
    adopted = sup.post("/api/v1/procedures", json={"text": CANCEL, "applies_when": ["résiliation"]})
    assert adopted.status_code == 201 and adopted.json()["id"] == pid  # proposed once
    assert sup.post(f"/api/v1/procedures/{pid}/approve").status_code == 200
    receipt = dpo.delete(f"/api/v1/subjects/{MEMBER}").json()
    assert receipt["complete"] is True and receipt["procedures_deleted"] == 0
    assert sup.get(f"/api/v1/procedures/{pid}").json()["status"] == "approved"  # the supervisor's words now


def test_a_procedure_naming_someone_is_refused_or_dropped(http: dict[str, httpx.Client]) -> None:
    """A supervisor's text with personal data is refused (400, the kinds and never the values); an
    advisor's statement in which the call's pseudonymisation replaced a value is not proposed."""
    agent, sup = http["agent"], http["supervisor"]
    for text in ("Pour un vol, toujours écrire à jean.dupont@exemple.fr.",
                 "Pour un vol, toujours écrire à jean.dupont(at)exemple.fr.",  # unusual spellings too
                 "Pour un remboursement, toujours virer sur FR76-3000-6000-0112-3456-7890-189."):
        r = sup.post("/api/v1/procedures", json={"text": text})
        assert r.status_code == 400 and r.json()["error"]["code"] == "procedure_personal_data", text
        assert "dupont" not in r.text and "3000" not in r.text
    _call(agent, MEMBER, "Pour un dégât des eaux, on appelle toujours Mme Martine Durand au 06 12 34 56 78.",
          "Pour un remboursement, on vire toujours sur le FR76-3000-6000-0112-3456-7890-189.")
    assert _proposed(sup) == {}
