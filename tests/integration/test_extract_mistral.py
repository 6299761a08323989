"""``MistralExtractor`` through the real ``mistralai`` SDK, over HTTP, against the vLLM stand-in
(``tests.support.vllm_server``): the three tasks, the request vLLM receives, and every failure the
issue lists (429, 5xx, timeouts, malformed and schema-violating answers), each with its reason code."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from carnet.adapters.extractors.mistral import MistralExtractor
from carnet.domain.extraction import transcript
from carnet.domain.extraction.schemas import FACTS, OBSOLETE
from carnet.domain.intake import Message
from carnet.entrypoints.http.server import free_port
from carnet.errors import ExtractionFailed
from tests.support.tls import make_mtls, make_tls
from tests.support.vllm_server import Reply, VllmStandIn, answer, fault, serving, unguided

MODEL = "mistral-small-3.2"


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[VllmStandIn, str]]:
    stand_in = VllmStandIn(served_model=MODEL)
    with serving(stand_in) as base:
        yield stand_in, base


@pytest.fixture
def vllm(server: tuple[VllmStandIn, str]) -> Iterator[VllmStandIn]:
    stand_in, _ = server
    stand_in.reset()
    yield stand_in
    assert not stand_in.problems, stand_in.problems


@pytest.fixture
def make(server: tuple[VllmStandIn, str]) -> Iterator[Any]:
    made: list[MistralExtractor] = []

    def build(**kw: Any) -> MistralExtractor:
        args: dict[str, Any] = {"server_url": server[1], "api_key": "vllm-test-key", "model": MODEL, "timeout": 5.0,
                                "backoff": 0.01}
        args.update(kw)
        extractor = MistralExtractor(**args)
        made.append(extractor)
        return extractor

    yield build
    for extractor in made:
        extractor.close()


def _at(hour: int, minute: int = 0) -> datetime:
    return datetime(2025, 3, 14, hour, minute, tzinfo=UTC)


CALL = [
    Message("user", "Bonjour, <PERSON_1> à l'appareil, c'est pour l'inondation de ma cuisine mardi.", _at(9, 0)),
    Message("advisor", "Je vois le dossier <CLAIM_1>. Le remboursement ira sur <IBAN_1> ?", _at(9, 1)),
    Message("user", "Oui. Il fait un temps de chien aujourd'hui.", _at(9, 2)),
]

FACTS_ANSWER = {
    "facts": [
        {"text": "Le client a subi un dégât des eaux le 11 mars 2025 (dossier <CLAIM_1>).", "category": "sinistre",
         "importance": 4, "valid_from": "2025-03-11", "worth_remembering": True, "about": "membre"},
        {"text": "Le remboursement du sinistre <CLAIM_1> sera versé sur <IBAN_1>.", "category": "paiement",
         "importance": 3, "valid_from": None, "worth_remembering": True, "about": "membre"},
        {"text": "Le client trouve qu'il fait mauvais.", "category": "autre", "importance": 1, "valid_from": None,
         "worth_remembering": False, "about": "membre"},
    ],
    "summary": "Appel sur le dégât des eaux (<CLAIM_1>) : remboursement sur <IBAN_1>.",
}


def _failure(call: Any) -> str:
    with pytest.raises(ExtractionFailed) as caught:
        call()
    return str(caught.value.context["reason"])


# --- the three tasks ---------------------------------------------------------------------------------


def test_extract_returns_the_facts_worth_remembering_and_the_episode(vllm: VllmStandIn, make: Any) -> None:
    extractor = make()
    vllm.push(answer(FACTS_ANSWER, usage=(812, 95)))
    out = extractor.extract(CALL, session_id="s-1", locale="fr")
    assert [f.text for f in out.facts] == [FACTS_ANSWER["facts"][0]["text"], FACTS_ANSWER["facts"][1]["text"]]
    first = out.facts[0]
    assert (first.category, first.importance, first.valid_from) == ("sinistre", 0.8, datetime(2025, 3, 11, tzinfo=UTC))
    assert out.facts[1].valid_from is None
    assert out.episode == FACTS_ANSWER["summary"]
    assert (out.tokens_in, out.tokens_out) == (812, 95)
    stats = extractor.stats
    assert (stats.calls, stats.retries, stats.failures, stats.set_aside) == (1, 0, 0, 1)
    assert (stats.tokens_in, stats.tokens_out) == (812, 95)


def test_facts_about_someone_else_on_the_line_are_counted_not_kept(vllm: VllmStandIn, make: Any) -> None:
    extractor = make()
    relative = {"text": "La fille de la cliente change d'employeur.", "category": "situation", "importance": 2,
                "valid_from": None, "worth_remembering": True, "about": "proche"}
    vllm.push(answer({**FACTS_ANSWER, "facts": [*FACTS_ANSWER["facts"], relative]}))
    out = extractor.extract(CALL, session_id="s-1", locale="fr")
    assert [f.text for f in out.facts] == [FACTS_ANSWER["facts"][0]["text"], FACTS_ANSWER["facts"][1]["text"]]
    assert (extractor.stats.set_aside, extractor.stats.not_member) == (1, 1)
    sent = vllm.requests[-1]
    assert sent.body["response_format"]["json_schema"]["name"] == "carnet_facts_v2"
    assert "Un fait par sujet" in sent.system and "about = membre" in sent.system


def test_without_a_session_there_is_no_episode(vllm: VllmStandIn, make: Any) -> None:
    vllm.push(answer(FACTS_ANSWER))
    assert make().extract(CALL, session_id=None, locale="fr").episode is None


def test_nothing_to_extract_makes_no_call(vllm: VllmStandIn, make: Any) -> None:
    out = make().extract([Message("system", "Tu es un assistant."), Message("user", "  ")], session_id="s", locale="fr")
    assert out.facts == () and vllm.requests == []


def test_obsolete_returns_only_ids_it_was_given(vllm: VllmStandIn, make: Any) -> None:
    extractor = make()
    existing = [("mem-a", "Le client habite au <ADDRESS_1>."), ("mem-b", "Le client préfère le SMS."),
                ("mem-c", "Le client habite à Lyon.")]
    vllm.push(answer({"obsolete_ids": ["3", "1", "9", "0", "mem-b", "1"]}))
    got = extractor.obsolete("Le client habite désormais au <ADDRESS_2>.", existing, locale="fr")
    assert got == ["mem-c", "mem-a"]
    assert extractor.stats.foreign_ids == 3
    sent = vllm.requests[0]
    assert "1. Le client habite au <ADDRESS_1>." in sent.user and "<ADDRESS_2>" in sent.user
    assert "mem-a" not in sent.user  # the model sees numbers, never record ids
    assert sent.body["response_format"]["json_schema"]["schema"] == OBSOLETE


def test_obsolete_with_nothing_known_makes_no_call(vllm: VllmStandIn, make: Any) -> None:
    assert make().obsolete("Le client habite à Nantes.", [], locale="fr") == []
    assert vllm.requests == []


def test_long_sessions_are_summarized_then_forgotten(vllm: VllmStandIn, make: Any) -> None:
    budget = 600
    extractor = make(transcript_chars=budget)
    messages = [Message("user" if n % 2 else "advisor", f"Message {n} : le contrat <CONTRACT_1> est évoqué, "
                        f"encore et encore, pour la {n}e fois.", _at(10, n)) for n in range(30)]
    parts = transcript.split(transcript.lines(messages, "fr"), budget)
    assert len(parts.older) >= 2
    summaries = [f"Résumé {n} : le contrat <CONTRACT_1> a été discuté." for n in range(len(parts.older))]
    vllm.push(*(answer({"summary": s}) for s in summaries), answer(FACTS_ANSWER, usage=(10, 5)))
    out = extractor.extract(messages, session_id="s-long", locale="fr")
    assert len(vllm.requests) == len(parts.older) + 1
    assert [r.body["response_format"]["json_schema"]["name"] for r in vllm.requests] == \
        ["carnet_summary"] * len(parts.older) + ["carnet_facts_v2"]
    assert summaries[0] in vllm.requests[1].user  # each summary folds in the previous one
    last = vllm.requests[-1].user
    assert last.startswith(f"Résumé du début de l'échange : {summaries[-1]}")
    assert "Message 29 " in last and "Message 0 " not in last
    assert all(len(r.user) < budget + 400 for r in vllm.requests)
    assert out.tokens_in >= 10 and len(out.facts) == 2


# --- what vLLM receives ------------------------------------------------------------------------------


def test_the_request_is_what_vllm_expects(vllm: VllmStandIn, make: Any) -> None:
    vllm.push(answer(FACTS_ANSWER))
    make(max_tokens=700).extract(CALL, session_id="s-1", locale="fr")
    sent = vllm.requests[0]
    body = sent.body
    assert body["model"] == MODEL and body["temperature"] == 0 and body["max_tokens"] == 700
    assert body["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "carnet_facts_v2", "schema": FACTS, "strict": True}}
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert sent.ignored == frozenset()  # nothing vLLM would silently drop (no random_seed, no safe_prompt…)
    assert "seed" not in body and body.get("stream") is False
    assert sent.headers["authorization"] == "Bearer vllm-test-key"
    assert sent.status == 200
    # the stable part holds no message; the volatile part holds them, with the conversation's date
    assert "inondation de ma cuisine" not in sent.system
    assert sent.user.startswith("Échange du 2025-03-14 :\n[09:00] Client : Bonjour, <PERSON_1>")


def test_the_system_prompt_is_a_stable_prefix(vllm: VllmStandIn, make: Any) -> None:
    extractor = make()
    other = [Message("user", "Je veux résilier mon contrat auto <CONTRACT_7>.", datetime(2026, 1, 5, tzinfo=UTC))]
    vllm.push(answer(FACTS_ANSWER), answer({"facts": [], "summary": ""}),
              answer({"obsolete_ids": []}), answer({"obsolete_ids": ["1"]}))
    extractor.extract(CALL, session_id="s-1", locale="fr")
    extractor.extract(other, session_id="s-2", locale="fr")
    extractor.obsolete("A", [("x", "B")], locale="fr")
    extractor.obsolete("C", [("y", "D"), ("z", "E")], locale="fr")
    first, second, third, fourth = vllm.requests
    assert first.system == second.system and third.system == fourth.system
    assert len(first.system) > 1000  # what the prefix cache keeps: rules, fields, examples
    # the whole rendered prompt shares the system message as its prefix
    assert first.system + first.user != second.system + second.user
    assert (first.system + second.user).startswith(first.system)


def test_english_prompts_are_shorter(vllm: VllmStandIn, make: Any) -> None:
    extractor = make()
    vllm.push(answer({"facts": [], "summary": ""}), answer({"facts": [], "summary": ""}))
    extractor.extract([Message("user", "Hello, my card was declined.")], session_id=None, locale="en")
    extractor.extract([Message("user", "Bonjour, ma carte est refusée.")], session_id=None, locale="fr")
    english, french = vllm.requests
    assert len(english.system) < len(french.system)
    assert english.user.startswith("Conversation (date unknown):\nCustomer: Hello")


def test_placeholders_reach_the_model_and_come_back_verbatim(vllm: VllmStandIn, make: Any) -> None:
    extractor = make()
    vllm.push(answer(FACTS_ANSWER))
    out = extractor.extract(CALL, session_id="s", locale="fr")
    sent = vllm.requests[0]
    for token in ("<PERSON_1>", "<CLAIM_1>", "<IBAN_1>"):
        assert token in sent.user
    assert "recopie-les tels quels" in sent.system and "N'invente jamais" in sent.system
    assert "<IBAN_1>" in out.facts[1].text and "<CLAIM_1>" in out.facts[0].text
    assert extractor.stats.made_up_placeholders == 0


def test_placeholders_no_message_had_are_counted(vllm: VllmStandIn, make: Any) -> None:
    extractor = make()
    made_up = {"facts": [{"text": "Le client a un second compte <IBAN_2>.", "category": "paiement", "importance": 2,
                          "valid_from": None, "worth_remembering": True, "about": "membre"}], "summary": ""}
    vllm.push(answer(made_up))
    out = extractor.extract(CALL, session_id="s", locale="fr")
    assert out.facts[0].text == "Le client a un second compte <IBAN_2>."
    assert extractor.stats.made_up_placeholders == 1


def test_the_sdk_fields_vllm_does_not_know_are_ignored_not_refused(vllm: VllmStandIn,
                                                                   server: tuple[VllmStandIn, str]) -> None:
    """The SDK's ``random_seed`` is not vLLM's ``seed``, and its ``tool_choice="any"`` is not vLLM's
    "required": the stand-in behaves as vLLM does (ignore the first, refuse the second)."""
    from mistralai.client import Mistral, errors

    sdk = Mistral(api_key="vllm-test-key", server_url=server[1], retry_config=None)
    vllm.push(answer({"anything": 1}, guided=False))
    sdk.chat.complete(model=MODEL, messages=[{"role": "user", "content": "x"}], random_seed=7, safe_prompt=False)
    assert {"random_seed", "safe_prompt"} <= vllm.requests[0].ignored and "seed" not in vllm.requests[0].body
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}
    with pytest.raises(errors.SDKError) as refused:
        sdk.chat.complete(model=MODEL, messages=[{"role": "user", "content": "x"}], tools=[tool], tool_choice="any")
    assert refused.value.status_code == 400 and "tool_choice" in refused.value.body


# --- failures ----------------------------------------------------------------------------------------


def test_a_429_is_retried_after_its_retry_after(vllm: VllmStandIn, make: Any) -> None:
    extractor = make()
    vllm.push(fault(429, retry_after="1"), answer(FACTS_ANSWER))
    started = time.monotonic()
    out = extractor.extract(CALL, session_id="s", locale="fr")
    assert time.monotonic() - started >= 1.0
    assert len(out.facts) == 2 and [r.status for r in vllm.requests] == [429, 200]
    assert (extractor.stats.calls, extractor.stats.retries, extractor.stats.failures) == (1, 1, 0)


def test_a_long_retry_after_is_left_to_the_intake_backoff(vllm: VllmStandIn, make: Any) -> None:
    vllm.push(fault(429, retry_after="120"))
    started = time.monotonic()
    assert _failure(lambda: make().extract(CALL, session_id="s", locale="fr")) == "http_429"
    assert time.monotonic() - started < 2 and len(vllm.requests) == 1


def test_server_errors_are_retried_then_fail(vllm: VllmStandIn, make: Any) -> None:
    extractor = make(max_retries=2)
    vllm.push(fault(500), fault(500), fault(500))
    assert _failure(lambda: extractor.extract(CALL, session_id="s", locale="fr")) == "http_500"
    assert len(vllm.requests) == 3
    assert extractor.stats.failure_reasons == {"http_500": 1} and extractor.stats.retries == 2


def test_a_transient_server_error_recovers(vllm: VllmStandIn, make: Any) -> None:
    vllm.push(fault(503), fault(502), answer(FACTS_ANSWER))
    assert len(make(max_retries=2).extract(CALL, session_id="s", locale="fr").facts) == 2


def test_a_hung_server_times_out_within_bounds(vllm: VllmStandIn, make: Any) -> None:
    extractor = make(timeout=0.5, max_retries=1)
    vllm.push(Reply(content='{"facts": [], "summary": ""}', delay=2.0),
              Reply(content='{"facts": [], "summary": ""}', delay=2.0))
    started = time.monotonic()
    assert _failure(lambda: extractor.extract(CALL, session_id="s", locale="fr")) == "timeout"
    assert time.monotonic() - started < 2.5
    assert len(vllm.requests) == 2


@pytest.mark.parametrize("content", ['{"facts": [', "Voici les faits : rien.", '```json\n{"facts": []}\n```', ""])
def test_malformed_json_fails_at_once(vllm: VllmStandIn, make: Any, content: str) -> None:
    extractor = make()
    vllm.push(unguided(content))
    assert _failure(lambda: extractor.extract(CALL, session_id="s", locale="fr")) == "malformed_json"
    assert len(vllm.requests) == 1  # not asked again: the same prompt gives the same answer
    assert extractor.stats.failure_reasons == {"malformed_json": 1}


def _fact(**change: Any) -> dict[str, Any]:
    return {"facts": [{**FACTS_ANSWER["facts"][0], **change}], "summary": ""}


@pytest.mark.parametrize("obj", [
    {"facts": []},  # no summary
    _fact(importance=9),
    _fact(importance="4"),  # no coercion
    _fact(category="météo"),
    _fact(valid_from="2025-02-30"),
    _fact(valid_from="mardi dernier"),
    _fact(confidence=0.9),  # a field nobody asked for
    {"facts": "aucun", "summary": ""},
    ["not", "an", "object"],
])
def test_schema_violations_fail_at_once(vllm: VllmStandIn, make: Any, obj: Any) -> None:
    vllm.push(answer(obj, guided=False))
    assert _failure(lambda: make().extract(CALL, session_id="s", locale="fr")) == "schema_violation"
    assert len(vllm.requests) == 1


def test_an_obsolete_answer_out_of_schema_fails(vllm: VllmStandIn, make: Any) -> None:
    vllm.push(answer({"obsolete_ids": [1, 2]}, guided=False))
    assert _failure(lambda: make().obsolete("A", [("x", "B")], locale="fr")) == "schema_violation"


def test_a_cut_off_answer_is_reported_as_truncated(vllm: VllmStandIn, make: Any) -> None:
    vllm.push(unguided('{"facts": [{"text": "Le cli', finish_reason="length"))
    assert _failure(lambda: make().extract(CALL, session_id="s", locale="fr")) == "truncated"


def test_refusals_are_not_retried(vllm: VllmStandIn, make: Any) -> None:
    assert _failure(lambda: make(model="mistral-large").extract(CALL, session_id="s", locale="fr")) == "http_404"
    assert _failure(lambda: make(api_key="wrong").extract(CALL, session_id="s", locale="fr")) == "http_401"
    assert _failure(lambda: make(api_key=None).extract(CALL, session_id="s", locale="fr")) == "http_401"
    # one request recorded: the 404 (401s stop at the API-key check, before the body is read)
    assert [r.status for r in vllm.requests] == [404]


def test_an_unreachable_server_fails_with_connection() -> None:
    extractor = MistralExtractor(f"http://127.0.0.1:{free_port()}", "k", MODEL, timeout=1.0, max_retries=1,
                                 backoff=0.01)
    try:
        assert _failure(lambda: extractor.extract(CALL, session_id="s", locale="fr")) == "connection"
        assert extractor.stats.retries == 1
    finally:
        extractor.close()


def test_observe_sees_every_call(vllm: VllmStandIn, make: Any) -> None:
    seen: list[tuple[str, float]] = []
    extractor = make(observe=lambda operation, seconds: seen.append((operation, seconds)))
    vllm.push(answer(FACTS_ANSWER), fault(400), answer({"obsolete_ids": []}))
    extractor.extract(CALL, session_id="s", locale="fr")
    _failure(lambda: extractor.extract(CALL, session_id="s", locale="fr"))
    extractor.obsolete("A", [("x", "B")], locale="fr")
    assert [op for op, _ in seen] == ["facts", "facts", "obsolete"]
    assert all(s > 0 for _, s in seen) and extractor.stats.last_seconds > 0


def test_tls_with_the_configured_ca(tmp_path: Path) -> None:
    tls = make_tls(tmp_path / "tls")
    stand_in = VllmStandIn(served_model=MODEL)
    with serving(stand_in, tls=tls) as base:
        assert base.startswith("https://")
        trusting = MistralExtractor(base, "vllm-test-key", MODEL, ca_cert=tls.ca_cert, timeout=5, backoff=0.01)
        default = MistralExtractor(base, "vllm-test-key", MODEL, timeout=5, backoff=0.01)
        try:
            stand_in.push(answer(FACTS_ANSWER))
            assert len(trusting.extract(CALL, session_id="s", locale="fr").facts) == 2
            assert _failure(lambda: default.extract(CALL, session_id="s", locale="fr")) == "tls"
            assert default.stats.retries == 0  # a certificate refused is not transient
        finally:
            trusting.close()
            default.close()
    assert not stand_in.problems


def test_mutual_tls_presents_the_client_certificate(tmp_path: Path) -> None:
    files = make_mtls(tmp_path / "tls")
    stand_in = VllmStandIn(served_model=MODEL)
    with serving(stand_in, mtls=files) as base:
        ca = files.server.ca_cert
        with_cert = MistralExtractor(base, "vllm-test-key", MODEL, ca_cert=ca, timeout=5, backoff=0.01,
                                     client_cert=(files.client_cert, files.client_key))
        without = MistralExtractor(base, "vllm-test-key", MODEL, ca_cert=ca, timeout=5, backoff=0.01, max_retries=0)
        try:
            stand_in.push(answer(FACTS_ANSWER))
            assert len(with_cert.extract(CALL, session_id="s", locale="fr").facts) == 2
            assert _failure(lambda: without.extract(CALL, session_id="s", locale="fr")) in {"tls", "connection"}
        finally:
            with_cert.close()
            without.close()
    assert not stand_in.problems
