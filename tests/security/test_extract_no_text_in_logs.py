"""The Mistral extractor logs reason codes and counts, never a message, a fact or an answer, and its
errors carry no text either: not on success, not on the failures that quote the model's answer, and
not when the environment asks the SDK to log request bodies (``MISTRAL_DEBUG``) or to export traces
(``MISTRAL_SDK_TELEMETRY``)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from carnet.adapters.extractors.mistral import MistralExtractor
from carnet.domain.intake import Message
from carnet.errors import ExtractionFailed
from tests.support.vllm_server import VllmStandIn, answer, fault, serving, unguided

MODEL = "mistral-small-3.2"
KEY = "vllm-secret-key-4242"
SAID = "Zéphyrine Quarteron-Malbec veut résilier"
ANSWERED = "Bérangère Tromplamine"


@pytest.fixture
def stand_in() -> Iterator[tuple[VllmStandIn, str]]:
    server = VllmStandIn(served_model=MODEL, api_key=KEY)
    with serving(server) as base:
        yield server, base
    assert not server.problems


def test_no_text_in_logs_or_errors(stand_in: tuple[VllmStandIn, str], capfd: pytest.CaptureFixture[str],
                                   caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MISTRAL_DEBUG", "1")
    monkeypatch.setenv("MISTRAL_SDK_TELEMETRY", "dedicated")  # would fail every call (and phone home) if obeyed
    caplog.set_level(logging.DEBUG)
    server, base = stand_in
    fact = {"text": f"{ANSWERED} a un contrat.", "category": "contrat", "importance": 3, "valid_from": None,
            "worth_remembering": True, "about": "membre"}
    server.push(
        answer({"facts": [fact], "summary": f"{ANSWERED} a appelé."}),
        unguided(f"Voici : {ANSWERED}"),
        answer({"facts": [{**fact, "importance": 7}], "summary": ANSWERED}, guided=False),
        fault(500), fault(503),
        answer({"obsolete_ids": [ANSWERED[:8]]}),
    )
    extractor = MistralExtractor(base, KEY, MODEL, timeout=5, max_retries=1, backoff=0.01)
    messages = [Message("user", f"{SAID} son contrat habitation."), Message("advisor", "C'est noté.")]
    errors: list[ExtractionFailed] = []
    try:
        assert extractor.extract(messages, session_id="s", locale="fr").facts
        for _ in range(3):
            with pytest.raises(ExtractionFailed) as caught:
                extractor.extract(messages, session_id="s", locale="fr")
            errors.append(caught.value)
        assert extractor.obsolete(SAID, [("m1", ANSWERED)], locale="fr") == []
    finally:
        extractor.close()
    assert [e.context["reason"] for e in errors] == ["malformed_json", "schema_violation", "http_503"]
    out = capfd.readouterr()
    logs = out.out + out.err + caplog.text
    assert "llm_answer_rejected" in logs and "llm_call_failed" in logs  # something was logged
    for error in errors:
        assert error.__cause__ is None and error.__suppress_context__
        logs += str(error) + repr(error) + repr(error.context)
    for secret in (SAID, "Zéphyrine", "Quarteron", ANSWERED, "Tromplamine", KEY, "contrat habitation"):
        assert secret not in logs
