"""The LLM's answer shapes are defined once, as pydantic models: the JSON schema the Mistral extractor
sends vLLM (``response_format``) is generated from the model (``model_json_schema()``), and the answer
is validated with that same model. Without a server: the extractor's chat call is replaced by a
recorder."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import jsonschema
import pytest
from pydantic import BaseModel, ValidationError

from carnet.adapters.extractors.mistral import MistralExtractor
from carnet.adapters.extractors.mistral_chat import Completion
from carnet.domain.extraction import transcript
from carnet.domain.extraction.prompts import EXAMPLES, Prompt
from carnet.domain.extraction.schemas import (
    ANSWERS,
    SCHEMA_NAMES,
    SCHEMAS,
    FactsAnswer,
    ObsoleteAnswer,
    SummaryAnswer,
    answer_schema,
)
from carnet.domain.intake import Message

FACT = {"text": "Le client habite au <ADDRESS_1>.", "category": "coordonnees", "importance": 4,
        "valid_from": "2025-05-01", "worth_remembering": True, "about": "membre"}


@dataclass
class _Sent:
    task: str
    schema_name: str
    schema: dict[str, Any]


@dataclass
class _RecordingChat:
    """Stands for ``MistralChat``: records what would be sent, answers from a script."""

    replies: list[str]
    sent: list[_Sent] = field(default_factory=list)

    def complete(self, operation: str, prompt: Prompt, *, schema_name: str, schema: dict[str, Any]) -> Completion:
        self.sent.append(_Sent(operation, schema_name, schema))
        return Completion(self.replies.pop(0), 10, 5)

    def close(self) -> None:
        pass


@pytest.fixture
def extractor() -> Iterator[MistralExtractor]:
    made = MistralExtractor("http://127.0.0.1:9", None, "mistral-small-3.2")
    yield made
    made.close()


def _recorder(extractor: MistralExtractor, *replies: Any) -> _RecordingChat:
    chat = _RecordingChat([json.dumps(r, ensure_ascii=False) for r in replies])
    extractor._chat = chat  # type: ignore[assignment]
    return chat


def _walk(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def test_the_schema_sent_for_facts_is_generated_from_the_model_that_reads_the_answer(
        extractor: MistralExtractor) -> None:
    chat = _recorder(extractor, {"facts": [FACT], "summary": "Changement d'adresse."})
    out = extractor.extract([Message("user", "J'habite au <ADDRESS_1>.")], session_id="s", locale="fr")
    (sent,) = chat.sent
    assert (sent.task, sent.schema_name) == ("facts", "carnet_facts_v2")
    assert sent.schema == answer_schema(FactsAnswer) == SCHEMAS["facts"]
    assert [f.text for f in out.facts] == [FACT["text"]] and out.episode == "Changement d'adresse."


def test_the_schema_sent_for_obsolete_is_generated_from_its_model(extractor: MistralExtractor) -> None:
    chat = _recorder(extractor, {"obsolete_ids": ["1"]})
    assert extractor.obsolete("Le client habite à Nantes.", [("m-1", "Le client habite à Lyon.")],
                              locale="fr") == ["m-1"]
    assert [(s.schema_name, s.schema) for s in chat.sent] == [("carnet_obsolete", answer_schema(ObsoleteAnswer))]


def test_the_schema_sent_for_summaries_is_generated_from_its_model(extractor: MistralExtractor) -> None:
    small = MistralExtractor("http://127.0.0.1:9", None, "m", transcript_chars=200)
    try:
        messages = [Message("user", f"Message {n} : le contrat <CONTRACT_1> est évoqué encore.") for n in range(12)]
        chunks = len(transcript.split(transcript.lines(messages, "fr"), 200).older)
        assert chunks >= 2
        chat = _recorder(small, *([{"summary": "Résumé."}] * chunks), {"facts": [], "summary": ""})
        small.extract(messages, session_id=None, locale="fr")
        assert [(s.task, s.schema) for s in chat.sent] == \
            [("summary", answer_schema(SummaryAnswer))] * chunks + [("facts", answer_schema(FactsAnswer))]
    finally:
        small.close()


@pytest.mark.parametrize("task", sorted(ANSWERS))
def test_the_generated_schema_is_model_json_schema_inlined_and_in_vllms_strict_subset(task: str) -> None:
    model = ANSWERS[task]
    schema = answer_schema(model)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert set(schema) <= {"type", "properties", "required", "additionalProperties"}
    assert set(SCHEMA_NAMES) == set(ANSWERS)
    for node in _walk(schema):
        assert "$ref" not in node and "$defs" not in node
        assert not isinstance(node.get("title"), str)
        if node.get("type") == "object":
            assert node["additionalProperties"] is False and node["required"] == list(node["properties"])
    raw = model.model_json_schema()  # the same constraints as pydantic generates them, $refs and all
    assert list(raw["properties"]) == list(schema["properties"]) == list(model.model_fields)
    answer_schema(model)["properties"].clear()  # a copy: the next call is intact
    assert answer_schema(model) == schema


def _valid(task: str) -> list[Any]:
    examples = [expected for loc in EXAMPLES.values() for _l, _d, expected in loc.get(task, [])]
    extra = {"facts": [{"facts": [FACT, {**FACT, "valid_from": None, "worth_remembering": False},
                                  {**FACT, "about": "relais"}], "summary": ""},
                       {"facts": [], "summary": "x" * 1200}],
             "obsolete": [{"obsolete_ids": []}, {"obsolete_ids": ["12345678"]}],
             "summary": [{"summary": ""}]}
    return examples + extra[task]


_INVALID: dict[str, list[Any]] = {
    "facts": [{"facts": []}, {"facts": [FACT], "summary": "", "more": 1}, {"facts": [FACT] * 21, "summary": ""},
              *({"facts": [{**FACT, **change}], "summary": ""} for change in (
                  {"importance": 9}, {"importance": "4"}, {"importance": True}, {"category": "météo"},
                  {"valid_from": "mardi dernier"}, {"text": ""}, {"text": "x" * 401}, {"confidence": 0.9},
                  {"worth_remembering": "yes"}, {"about": "client"}, {"about": None})),
              {"facts": [{k: v for k, v in FACT.items() if k != "valid_from"}], "summary": ""},
              {"facts": [{k: v for k, v in FACT.items() if k != "about"}], "summary": ""},  # version 1's shape
              {"facts": "aucun", "summary": ""}, ["not", "an", "object"], None],
    "obsolete": [{"obsolete_ids": [1, 2]}, {"obsolete_ids": ["123456789"]}, {}, {"obsolete_ids": None}],
    "summary": [{"summary": 3}, {"summary": "ok", "extra": 1}, {"summary": "x" * 1201}, {}],
}

# Where the model is stricter than any JSON schema can say: a date that does not exist, and 4.0
# (a JSON Schema "integer" accepts it; Carnet wants 4).
_MODEL_ONLY: dict[str, list[Any]] = {
    "facts": [{"facts": [{**FACT, "valid_from": "2025-02-30"}], "summary": ""},
              {"facts": [{**FACT, "importance": 4.0}], "summary": ""}],
    "obsolete": [], "summary": [],
}


def _model_accepts(model: type[BaseModel], obj: Any) -> bool:
    try:
        model.model_validate_json(json.dumps(obj))
    except ValidationError:
        return False
    return True


@pytest.mark.parametrize("task", sorted(ANSWERS))
def test_answers_the_schema_admits_are_the_answers_the_model_accepts(task: str) -> None:
    model, schema = ANSWERS[task], answer_schema(ANSWERS[task])
    raw = jsonschema.Draft202012Validator(model.model_json_schema())
    sent = jsonschema.Draft202012Validator(schema)
    for obj in _valid(task):
        assert sent.is_valid(obj) and raw.is_valid(obj) and _model_accepts(model, obj), obj
    for obj in _INVALID[task]:
        assert not sent.is_valid(obj) and not raw.is_valid(obj) and not _model_accepts(model, obj), obj
    for obj in _MODEL_ONLY[task]:
        assert sent.is_valid(obj) and not _model_accepts(model, obj), obj
