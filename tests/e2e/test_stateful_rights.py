"""A Hypothesis state machine over the REST API: random sequences of remember, messages, rectify,
forget, legal hold, export and erase for two tenants, with bodies drawn from the published OpenAPI
schema (schemathesis' generator: anything the schema allows, hostile text included).

After every step, for every subject of both tenants:
- no answer was a 5xx;
- export is one valid JSON document that lists every record the machine knows of (and only those);
- a subject erased has nothing left to list, search or export;
- the other tenant, asking for the same subject id, sees none of these records.

The two tenants use the same subject ids on purpose: "S1" of one is not "S1" of the other.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, ClassVar

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from carnet.bootstrap.container import Container
from carnet.bootstrap.wiring import build, start_workers
from carnet.entrypoints.http.app import create_app
from carnet.ports import Embedder
from carnet.services.apikeys import create_key
from carnet.settings.root import Settings
from tests.support.serve import TEST_REQUEST_DEADLINE_MS

TENANTS = ("assur-nord", "banque-sud")
SUBJECTS = (0, 1)  # two subjects per tenant and run: ids made unique per run (the store outlives runs)
MEMORIES = "/api/v1/subjects/{subject_id}/memories"
MEMORY = "/api/v1/subjects/{subject_id}/memories/{memory_id}"
MESSAGES = "/api/v1/subjects/{subject_id}/messages"


def _ascii_headers(headers: dict[str, Any] | None) -> dict[str, str]:
    """The generated headers an HTTP client can send at all (header values are latin-1 on the wire;
    httpx refuses others before anything leaves): the caller's own Authorization always wins."""
    out: dict[str, str] = {}
    for name, value in (headers or {}).items():
        if name.lower() == "authorization" or not isinstance(value, str):
            continue
        if value.isascii() and value.isprintable() and name.isascii():
            out[name] = value
    return out


_OFFSETS = st.integers(-14 * 60, 14 * 60).map(lambda m: timezone(timedelta(minutes=m)))
EDGE_DATES = st.one_of(
    # The ends of what a date-time can say (year 1 and 9999) with the widest offsets: their UTC value
    # may fall outside what a datetime holds.
    st.builds(lambda naive, tz: naive.replace(tzinfo=tz),
              st.sampled_from([datetime.min, datetime.max, datetime(1, 1, 1, 13), datetime(9999, 12, 31, 12)]),
              _OFFSETS),
    st.datetimes(min_value=datetime.min, max_value=datetime.max, timezones=_OFFSETS),
).map(datetime.isoformat)


def _template(path: str) -> str:
    """The route of a path, for the tally of what the runs exercised."""
    path = re.sub(r"/subjects/run\d+-S\d", "/subjects/{s}", path)
    return re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "{id}", path)


class Rights(RuleBasedStateMachine):
    """One store, two tenants; ``known[(tenant, subject)]`` is the set of record ids that must exist."""

    container: Container
    clients: dict[str, TestClient]
    operations: dict[str, Any]

    runs = 0
    exercised: ClassVar[Counter[str]] = Counter()  # what the runs did, checked at the end

    def __init__(self) -> None:
        super().__init__()
        Rights.runs += 1
        self.ids = tuple(f"run{Rights.runs}-S{n}" for n in SUBJECTS)
        self.known: dict[tuple[str, str], set[str]] = {(t, s): set() for t in TENANTS for s in self.ids}
        self.held: set[tuple[str, str]] = set()
        self.intakes: set[str] = set()
        self.erased: set[tuple[str, str]] = set()

    # -- helpers ------------------------------------------------------------------------------------

    def _call(self, tenant: str, method: str, path: str, **kwargs: Any) -> Any:
        r = self.clients[tenant].request(method, path, **kwargs)
        Rights.exercised[f"{method} {_template(path)} {r.status_code}"] += 1
        assert r.status_code < 500, f"{method} {path} -> {r.status_code}: {r.text[:500]}"
        return r

    def _draw(self, data: st.DataObject, operation: str) -> Any:
        return data.draw(self.operations[operation].as_strategy(), label=operation)

    def _export(self, tenant: str, subject: str) -> list[dict[str, Any]] | None:
        r = self._call(tenant, "GET", f"/api/v1/subjects/{subject}/export")
        if r.status_code == 404:
            return None
        assert r.status_code == 200, r.text[:500]
        document = json.loads(r.content)  # one valid JSON document, whatever the records hold
        records: list[dict[str, Any]] = document["records"]
        return records

    @staticmethod
    def _record_id(item: dict[str, Any]) -> str:
        return str(item["memory"]["id"] if "memory" in item else item["id"])

    # -- rules --------------------------------------------------------------------------------------

    @initialize()
    def fresh(self) -> None:
        """Nothing to start with, then one plain record for each tenant's first subject, so that
        rectify, forget and erase have something to act on from the first step."""
        for t in TENANTS:
            for s in self.ids:
                assert self._export(t, s) is None
            r = self._call(t, "POST", MEMORIES.format(subject_id=self.ids[0]),
                           json={"text": "Le membre a un contrat habitation.", "category": "contrat"})
            assert r.status_code == 201, r.text[:300]
            self.known[(t, self.ids[0])].add(r.json()["memory"]["id"])
        # Once per run, each kind of right that succeeds, so the random sequences start from a store
        # that has seen them all (how often the random rules reach them depends on what they draw).
        t, s = TENANTS[0], self.ids[0]
        (memory_id,) = self.known[(t, s)]
        assert self._call(t, "PATCH", MEMORY.format(subject_id=s, memory_id=memory_id),
                          json={"importance": 0.8}).status_code == 200
        assert self._call(t, "PUT", f"/api/v1/subjects/{s}/legal-hold", json={}).status_code == 200
        assert self._call(t, "DELETE", f"/api/v1/subjects/{s}/legal-hold").status_code == 200

    @rule(tenant=st.sampled_from(TENANTS), subject=st.sampled_from(SUBJECTS), data=st.data())
    def remember(self, tenant: str, subject: int, data: st.DataObject) -> None:
        subject_id = self.ids[subject]
        case = self._draw(data, "remember")
        r = self._call(tenant, "POST", MEMORIES.format(subject_id=subject_id), json=case.body,
                       headers=_ascii_headers(case.headers))
        if r.status_code == 201:
            body = r.json()
            outcomes = body.get("results", [body])
            for o in outcomes:
                self.known[(tenant, subject_id)].add(o["memory"]["id"])
            self.erased.discard((tenant, subject_id))

    @rule(tenant=st.sampled_from(TENANTS), subject=st.sampled_from(SUBJECTS), at=EDGE_DATES, data=st.data())
    def remember_at_any_date(self, tenant: str, subject: int, at: str, data: st.DataObject) -> None:
        """A schema-valid body whose date is drawn over the whole range the schema allows (any aware
        date-time, offsets of ±14 h): the schema generator alone seldom reaches the edges."""
        case = self._draw(data, "remember")
        plain = {"text": "Le membre a appelé."}
        generated = case.body if isinstance(case.body, dict) and "text" in case.body else plain
        body = dict(generated)
        body["occurred_at"] = at
        subject_id = self.ids[subject]
        r = self._call(tenant, "POST", MEMORIES.format(subject_id=subject_id), json=body)
        if r.status_code == 201:
            self.known[(tenant, subject_id)].add(r.json()["memory"]["id"])
            self.erased.discard((tenant, subject_id))

    @rule(tenant=st.sampled_from(TENANTS), subject=st.sampled_from(SUBJECTS), data=st.data())
    def messages(self, tenant: str, subject: int, data: st.DataObject) -> None:
        subject_id = self.ids[subject]
        case = self._draw(data, "messages")
        body, headers = case.body, _ascii_headers(case.headers)
        if data.draw(st.booleans(), label="a plain call"):  # generated bodies are mostly refused
            body, headers = {"session_id": "appel-1", "messages": [
                {"role": "user", "content": "Bonjour, j'ai déménagé à Lille le mois dernier."},
                {"role": "advisor", "content": "Je note votre nouvelle adresse."}]}, {}
        r = self._call(tenant, "POST", MESSAGES.format(subject_id=subject_id), json=body, headers=headers)
        if r.status_code != 202 or r.json()["intake_id"] in self.intakes:
            return  # refused, or the replay of an intake already applied (an Idempotency-Key used before)
        self.intakes.add(r.json()["intake_id"])
        done = self._call(tenant, "GET", f"/api/v1/intakes/{r.json()['intake_id']}",
                          params={"wait": "true", "timeout": 10}).json()
        assert done["status"] in ("done", "dead"), done
        if done["memory_ids"]:
            self.known[(tenant, subject_id)].update(done["memory_ids"])
            self.erased.discard((tenant, subject_id))

    @precondition(lambda self: any(self.known.values()))
    @rule(data=st.data())
    def rectify(self, data: st.DataObject) -> None:
        tenant, subject = data.draw(st.sampled_from(sorted(k for k, v in self.known.items() if v)))
        memory_id = data.draw(st.sampled_from(sorted(self.known[(tenant, subject)])))
        # A schema-generated correction (mostly refused: a retention class the tenant lacks, a text of
        # spaces…) or a plain one, so that corrections that apply are part of the sequences too.
        plain = data.draw(st.sampled_from([None, {"text": "Le membre habite à Rennes."}, {"importance": 0.9},
                                           {"tags": ["rappel"], "category": "adresse"}]))
        body = plain if plain is not None else self._draw(data, "rectify").body
        self._call(tenant, "PATCH", MEMORY.format(subject_id=subject, memory_id=memory_id), json=body)

    @precondition(lambda self: any(self.known.values()))
    @rule(data=st.data())
    def forget(self, data: st.DataObject) -> None:
        tenant, subject = data.draw(st.sampled_from(sorted(k for k, v in self.known.items() if v)))
        memory_id = data.draw(st.sampled_from(sorted(self.known[(tenant, subject)])))
        r = self._call(tenant, "DELETE", MEMORY.format(subject_id=subject, memory_id=memory_id))
        assert r.status_code == 204, r.text[:500]
        self.known[(tenant, subject)].discard(memory_id)

    @rule(tenant=st.sampled_from(TENANTS), subject=st.sampled_from(SUBJECTS), hold=st.booleans(), data=st.data())
    def legal_hold(self, tenant: str, subject: int, hold: bool, data: st.DataObject) -> None:
        key = (tenant, self.ids[subject])
        path = f"/api/v1/subjects/{key[1]}/legal-hold"
        if hold:
            plain = data.draw(st.sampled_from([None, {}, {"reference": "LIT-2026-0042"}]), label="hold body")
            body = plain if plain is not None else self._draw(data, "hold").body
            r = self._call(tenant, "PUT", path, json=body)
        else:
            r = self._call(tenant, "DELETE", path)
        if r.status_code == 200:
            (self.held.add if hold else self.held.discard)(key)

    @rule(tenant=st.sampled_from(TENANTS), subject=st.sampled_from(SUBJECTS))
    def erase(self, tenant: str, subject: int) -> None:
        key = (tenant, self.ids[subject])
        r = self._call(tenant, "DELETE", f"/api/v1/subjects/{key[1]}")
        if key in self.held and r.status_code != 404:
            assert r.status_code == 409 and r.json()["error"]["code"] == "legal_hold", r.text[:500]
            return
        if r.status_code == 404:
            assert not self.known[key], "a subject with records answered 404 to erasure"
            return
        assert r.status_code == 200, r.text[:500]
        assert r.json()["complete"] is True, r.json()
        self.known[key] = set()
        self.erased.add(key)
        self.held.discard(key)

    # -- what must hold after every step --------------------------------------------------------

    @invariant()
    def export_lists_every_record_and_only_the_tenants(self) -> None:
        seen: dict[tuple[str, str], set[str]] = {}
        for key, ids in self.known.items():
            records = self._export(*key)
            exported = set() if records is None else {self._record_id(item) for item in records}
            assert exported == ids, f"export of {key}: {sorted(exported ^ ids)} differ"
            seen[key] = exported
        for s in self.ids:
            a, b = seen[(TENANTS[0], s)], seen[(TENANTS[1], s)]
            assert not a & b, "one record in two tenants' exports"

    @invariant()
    def erased_subjects_have_nothing_findable(self) -> None:
        for tenant, subject in self.erased:
            listed = self._call(tenant, "GET", MEMORIES.format(subject_id=subject), params={"status": "any"})
            assert listed.status_code == 404 or not listed.json()["items"], listed.text[:300]
            found = self._call(tenant, "POST", f"/api/v1/subjects/{subject}/search",
                               json={"query": "membre contrat adresse", "k": 50, "include_superseded": True})
            assert found.status_code == 404 or not found.json()["results"], found.text[:300]


@pytest.fixture
def machine_env(tmp_path: Path, embedder: Embedder) -> Iterator[None]:
    c = build(Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys",  # admission's deadline, not the
                       api={"request_deadline_ms": TEST_REQUEST_DEADLINE_MS}), embedder=embedder)  # suite's load
    try:
        start_workers(c)
        app = create_app(c)
        schema = schemathesis.openapi.from_asgi("/openapi.json", app)
        Rights.container = c
        Rights.operations = {
            "remember": schema[MEMORIES]["POST"],
            "messages": schema[MESSAGES]["POST"],
            "rectify": schema[MEMORY]["PATCH"],
            "hold": schema["/api/v1/subjects/{subject_id}/legal-hold"]["PUT"],
        }
        Rights.clients = {}
        for tenant in TENANTS:
            key, _ = create_key(c.deps.catalog, c.pepper, tenant=tenant, roles=["agent", "dpo"])
            Rights.clients[tenant] = TestClient(app, headers={"Authorization": f"Bearer {key}"})
        yield
        for client in Rights.clients.values():
            client.close()
    finally:
        c.close()


@pytest.mark.slow
def test_rights_hold_whatever_the_sequence(machine_env: None) -> None:
    run = Rights.TestCase
    run.settings = settings(max_examples=14, stateful_step_count=8, deadline=None, database=None,
                            derandomize=True, suppress_health_check=list(HealthCheck))
    run().runTest()
    done = Rights.exercised
    print(sorted(done.items()))
    # The runs did each thing for real (a sequence of refusals only would prove nothing).
    s = "/api/v1/subjects/{s}"
    for wanted in (f"POST {s}/memories 201", f"POST {s}/messages 202", f"PATCH {s}/memories/{{id}} 200",
                   f"DELETE {s}/memories/{{id}} 204", f"PUT {s}/legal-hold 200", f"DELETE {s} 200",
                   f"GET {s}/export 200", "GET /api/v1/intakes/{id} 200"):
        assert done[wanted], f"never exercised: {wanted}"
