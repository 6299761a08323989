"""The loss test through the real `mistralai` SDK: 200 intakes handed over concurrently while 20% of
the model's answers fail (HTTP 500, 429, malformed JSON). Every intake ends done or dead with a
reason; none is silently dropped, none applied twice, and the counts add up."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator

import pytest

from carnet.adapters.extractors.mistral import MistralExtractor
from carnet.bootstrap.container import Container
from carnet.domain.intake import IntakeStatus, Message, RetryPolicy
from carnet.domain.records import Scope
from carnet.ports import RecordFilter
from carnet.services.apikeys import Principal
from carnet.services.intake.worker import Worker, WorkerPool
from tests.support.queue import wait_drained
from tests.support.vllm_server import Reply, VllmStandIn, answer, fault, serving, unguided

WHO = Principal("k0000000001", "assur-nord", ("agent",))
INTAKES = SUBJECTS = 200  # one intake per subject: no neighbour, so no contradiction judgment call


def _script(n: int, rng: random.Random) -> list[Reply]:
    replies: list[Reply] = []
    for k in range(n):
        roll = rng.random()
        if roll < 0.08:
            replies.append(fault(500))
        elif roll < 0.14:
            replies.append(fault(429, retry_after="0"))
        elif roll < 0.20:
            replies.append(unguided("Voici les faits : le membre a appelé."))
        else:
            replies.append(answer({"facts": [{"text": f"Le membre a signalé le fait numéro {k}.",
                                              "category": "autre", "importance": 3, "valid_from": None,
                                              "worth_remembering": True, "about": "membre"}], "summary": ""}))
    return replies


@pytest.fixture
def llm() -> Iterator[tuple[VllmStandIn, MistralExtractor]]:
    stand_in = VllmStandIn()
    stand_in.push(*_script(INTAKES * 4, random.Random(5)))
    with serving(stand_in) as base:
        # no retry inside the call: each failed answer is a failed attempt of the intake
        extractor = MistralExtractor(base, stand_in.api_key, stand_in.served_model, timeout=10, max_retries=0)
        try:
            yield stand_in, extractor
        finally:
            extractor.close()


@pytest.mark.slow
def test_200_concurrent_intakes_with_20_percent_llm_failures(container: Container,
                                                              llm: tuple[VllmStandIn, MistralExtractor]) -> None:
    stand_in, extractor = llm
    policy = RetryPolicy(max_attempts=3, base_seconds=0.01, max_seconds=0.05)
    pool = WorkerPool(lambda n: Worker(container.deps, container.queue, extractor, container.audit, owner=f"w{n}",
                                       policy=policy), threads=4, poll_seconds=0.02)
    ids: list[str] = []
    lock = threading.Lock()

    def client(c: int) -> None:
        for k in range(INTAKES // 10):
            iid = container.facade.submit_messages(WHO, subject_id=f"LLM-{c * (INTAKES // 10) + k}",
                                                   session_id=None, idempotency_key=f"{c}-{k}",
                                                   messages=[Message("user", f"Signalement {c}-{k}.")]).id
            with lock:
                ids.append(iid)

    pool.start()
    try:
        clients = [threading.Thread(target=client, args=(c,)) for c in range(10)]
        for t in clients:
            t.start()
        for t in clients:
            t.join()
        wait_drained(container.queue.store, timeout=240)
    finally:
        pool.stop()
    final = [container.queue.store.get("assur-nord", i) for i in ids]
    assert len(set(ids)) == INTAKES and all(i is not None for i in final)
    done = [i for i in final if i is not None and i.status is IntakeStatus.DONE]
    dead = [i for i in final if i is not None and i.status is IntakeStatus.DEAD]
    assert len(done) + len(dead) == INTAKES
    assert {d.reason for d in dead} <= {"http_500", "http_429", "malformed_json"}
    assert all(d.attempts == 3 for d in dead)
    stored = 0
    for n in range(SUBJECTS):
        scope = Scope("assur-nord", container.deps.hasher.subject_hash("assur-nord", f"LLM-{n}"))
        stored += container.deps.index.count(scope, where=RecordFilter(statuses=None))
    assert stored == sum(len(d.memory_ids) for d in done) == len(done)  # one fact each, none twice
    assert extractor.stats.failures == len(stand_in.requests) - len(done)  # every failed answer was counted
    assert not stand_in.problems
