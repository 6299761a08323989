"""An intake worker with the Mistral extractor against the vLLM stand-in, on the real stores: the
model sees placeholders only, the facts it returns become memories with the values put back, and a
malformed answer sends the intake back to the queue with its reason instead of losing the facts."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from carnet.adapters.extractors.mistral import MistralExtractor
from carnet.adapters.local.judge_file import load_judge
from carnet.bootstrap.container import Container
from carnet.domain.intake import IntakeStatus, Message
from carnet.services.apikeys import Principal
from carnet.services.intake.worker import Worker
from tests.support.judges import always_uncertain
from tests.support.vllm_server import VllmStandIn, answer, serving, unguided

WHO = Principal("k0000000001", "assur-nord", ("agent", "dpo"))
AT = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
IBAN = "FR76 3000 6000 0112 3456 7890 189"


@pytest.fixture
def vllm() -> Iterator[tuple[VllmStandIn, MistralExtractor]]:
    stand_in = VllmStandIn()
    with serving(stand_in) as base:
        extractor = MistralExtractor(base, stand_in.api_key, stand_in.served_model, timeout=5, backoff=0.01)
        try:
            yield stand_in, extractor
        finally:
            extractor.close()
    assert not stand_in.problems


def _submit(c: Container, subject: str) -> str:
    texts = [f"Mon IBAN est {IBAN}, prélevez le 5 du mois.", "Et il fait beau aujourd'hui."]
    messages = [Message("user", t, AT + timedelta(minutes=n)) for n, t in enumerate(texts)]
    return c.facade.submit_messages(WHO, subject_id=subject, session_id="call-1", messages=messages,
                                    idempotency_key=None).id


def test_facts_from_the_llm_become_memories(container: Container, vllm: tuple[VllmStandIn, MistralExtractor]) -> None:
    stand_in, extractor = vllm
    stand_in.push(answer({"facts": [
        {"text": "Le client veut être prélevé le 5 du mois sur <IBAN_1>.", "category": "paiement", "importance": 4,
         "valid_from": "2026-11-29", "worth_remembering": True, "about": "membre"},
        {"text": "Il fait beau.", "category": "autre", "importance": 1, "valid_from": None,
         "worth_remembering": False, "about": "membre"}],
        "summary": "Changement de date de prélèvement (le 5) sur <IBAN_1>."}))
    iid = _submit(container, "ADH-LLM-1")
    assert Worker(container.deps, container.queue, extractor, container.audit, owner="w1").run_once() == 1
    done = container.facade.intake_status(WHO, intake_id=iid)
    assert done.status is IntakeStatus.DONE and len(done.memory_ids) == 2  # one fact and the episode
    sent = stand_in.requests[0].user
    assert "FR76" not in sent and "<IBAN_1>" in sent
    texts = sorted(m.text for m in container.facade.list_memories(WHO, subject_id="ADH-LLM-1").items)
    assert texts == [f"Changement de date de prélèvement (le 5) sur {IBAN}.",
                     f"Le client veut être prélevé le 5 du mois sur {IBAN}."]


def test_a_malformed_answer_is_retried_later_not_lost(container: Container,
                                                      vllm: tuple[VllmStandIn, MistralExtractor]) -> None:
    stand_in, extractor = vllm
    stand_in.push(unguided("Voici les faits : le client veut un prélèvement le 5."))
    iid = _submit(container, "ADH-LLM-2")
    Worker(container.deps, container.queue, extractor, container.audit, owner="w1").run_once()
    status = container.facade.intake_status(WHO, intake_id=iid)
    assert status.status is IntakeStatus.PENDING and status.reason == "malformed_json" and status.attempts == 1


def _fact(text: str) -> dict[str, object]:
    return {"facts": [{"text": text, "category": "contrat", "importance": 3, "valid_from": None,
                       "worth_remembering": True, "about": "membre"}], "summary": ""}


def test_the_llm_judges_what_a_new_fact_makes_obsolete(container: Container, tmp_path: Path,
                                                      vllm: tuple[VllmStandIn, MistralExtractor]) -> None:
    """Where reconcile's judge is unsure (here: a judge unsure of every pair), the model's judgment
    supersedes: selling the car ends "drives a 208"."""
    stand_in, extractor = vllm
    deps = replace(container.deps, supersession=load_judge(always_uncertain(tmp_path)))
    worker = Worker(deps, container.queue, extractor, container.audit, owner="w1")

    def call(text: str, at: datetime) -> str:  # calls on different days: notes of one instant are never judged
        iid = container.facade.submit_messages(WHO, subject_id="ADH-LLM-3", session_id=None, idempotency_key=None,
                                               messages=[Message("user", text, at)]).id
        assert worker.run_once() == 1
        return container.facade.intake_status(WHO, intake_id=iid).memory_ids[0]

    stand_in.push(answer(_fact("Le membre roule en Peugeot 208, assurée tous risques.")))
    car = call("Je roule en Peugeot 208, assurée tous risques.", AT)
    stand_in.push(answer(_fact("Le membre a vendu sa voiture et n'a plus de véhicule.")),
                  answer({"obsolete_ids": ["1"]}))
    sold = call("J'ai vendu ma voiture, je n'ai plus de véhicule.", AT + timedelta(days=30))
    judged = stand_in.requests[-1]
    assert "Peugeot 208" in judged.user and car not in judged.user  # numbers, never record ids
    old = container.facade.get_memory(WHO, subject_id="ADH-LLM-3", memory_id=car)
    assert old.status.value == "superseded" and old.superseded_by == sold
    history = container.facade.history(WHO, subject_id="ADH-LLM-3", memory_id=car)
    assert history[-1].action == "superseded" and history[-1].detail == {"by": sold, "rule": "llm"}


def test_a_failed_judgment_does_not_fail_the_intake(container: Container, tmp_path: Path,
                                                     vllm: tuple[VllmStandIn, MistralExtractor]) -> None:
    stand_in, extractor = vllm
    deps = replace(container.deps, supersession=load_judge(always_uncertain(tmp_path)))
    worker = Worker(deps, container.queue, extractor, container.audit, owner="w1")
    for day, (text, extra) in enumerate((("Le membre préfère être appelé le matin.", []),
                                         ("Le membre préfère désormais être appelé le soir.", [unguided("non")]))):
        stand_in.push(answer(_fact(text)), *extra)
        iid = container.facade.submit_messages(WHO, subject_id="ADH-LLM-4", session_id=None, idempotency_key=None,
                                               messages=[Message("user", text, AT + timedelta(days=day))]).id
        assert worker.run_once() == 1
        assert container.facade.intake_status(WHO, intake_id=iid).status is IntakeStatus.DONE
    assert len(container.facade.list_memories(WHO, subject_id="ADH-LLM-4").items) == 2  # both kept, both active
    assert len(stand_in.requests) == 3 and extractor.stats.failure_reasons == {"malformed_json": 1}
