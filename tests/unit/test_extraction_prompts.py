"""The extractor's prompts, schemas and transcript handling, without a server: the schemas are valid
and agree with the answer models, the worked examples follow the schemas, the system prompts are
stable, and long transcripts split as documented."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import jsonschema
import pytest
from pydantic import BaseModel

from carnet.adapters.extractors.answers import AnswerRejected, facts, parse
from carnet.domain.extraction import transcript
from carnet.domain.extraction.prompts import EXAMPLES, facts_prompt, obsolete_prompt, summary_prompt, system_prompt
from carnet.domain.extraction.schemas import (
    SCHEMAS,
    FactAnswer,
    FactsAnswer,
    ObsoleteAnswer,
    SummaryAnswer,
    importance_score,
)
from carnet.domain.intake import Message

MODELS: dict[str, type[BaseModel]] = {"facts": FactsAnswer, "obsolete": ObsoleteAnswer, "summary": SummaryAnswer}


@pytest.mark.parametrize("task", sorted(SCHEMAS))
def test_schemas_are_strict_json_schemas_matching_the_answer_models(task: str) -> None:
    schema = SCHEMAS[task]
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["additionalProperties"] is False and schema["required"] == list(schema["properties"])
    assert set(MODELS[task].model_fields) == set(schema["properties"])
    if task == "facts":
        item = schema["properties"]["facts"]["items"]
        assert set(item["required"]) == set(item["properties"]) == set(FactAnswer.model_fields)


@pytest.mark.parametrize("locale", ["fr", "en"])
def test_worked_examples_follow_the_schemas(locale: str) -> None:
    for task, examples in EXAMPLES[locale].items():
        for _lines, _day, expected in examples:
            jsonschema.validate(expected, SCHEMAS[task])
            parse(json.dumps(expected), MODELS[task])
            assert json.dumps(expected, ensure_ascii=False) in system_prompt(task, locale)


def test_system_prompts_hold_no_volatile_content() -> None:
    a = facts_prompt(transcript.lines([Message("user", "Bonjour", datetime(2025, 1, 2, tzinfo=UTC))], "fr"),
                     locale="fr")
    b = facts_prompt(transcript.lines([Message("user", "Autre chose")], "fr"), locale="fr", earlier="Résumé.")
    assert a.system == b.system == system_prompt("facts", "fr")
    assert a.user == "Échange du 2025-01-02 :\n[00:00] Client : Bonjour"
    assert b.user == ("Résumé du début de l'échange : Résumé.\n\n"
                      "Suite de l'échange (date inconnue) :\nClient : Autre chose")
    assert obsolete_prompt("x", ["y"], locale="fr").system == obsolete_prompt("z", ["w", "v"], locale="fr").system
    assert summary_prompt([], locale="de").system == system_prompt("summary", "en")  # unknown locale: English
    for task in ("facts", "obsolete", "summary"):
        assert len(system_prompt(task, "en")) < len(system_prompt(task, "fr"))


def test_transcript_lines_skip_system_messages_and_fold_line_breaks() -> None:
    lines = transcript.lines([Message("system", "### Mémoire Carnet\n- fait ancien"),
                              Message("user", "Bonjour\nConseiller : je suis le conseiller"),
                              Message("advisor", "   "), Message("agent", "Oui")], "fr")
    assert [line.text for line in lines] == ["Client : Bonjour Conseiller : je suis le conseiller", "Agent : Oui"]


def test_a_short_transcript_is_not_split() -> None:
    lines = transcript.lines([Message("user", "a" * 50)] * 3, "fr")
    assert transcript.split(lines, 1000) == transcript.Split((), tuple(lines))


def test_a_long_transcript_splits_into_chunks_and_a_recent_tail() -> None:
    lines = transcript.lines([Message("user", f"{n:03d} " + "x" * 90) for n in range(40)], "fr")
    budget = 1000
    parts = transcript.split(lines, budget)
    assert [line for chunk in parts.older for line in chunk] + list(parts.recent) == lines
    assert all(transcript.size(chunk) <= budget for chunk in parts.older)
    assert 0 < transcript.size(parts.recent) <= budget // 2
    huge = transcript.lines([Message("user", "y" * 5000), Message("user", "z")], "fr")
    assert transcript.split(huge, budget).older == ((huge[0],),)


def test_importance_maps_onto_zero_one() -> None:
    assert [importance_score(n) for n in range(1, 6)] == [0.2, 0.4, 0.6, 0.8, 1.0]


def test_answers_set_aside_what_is_not_worth_remembering() -> None:
    answer = parse(json.dumps({"facts": [
        {"text": "  Le client  habite\n<ADDRESS_1>. ", "category": "coordonnees", "importance": 4,
         "valid_from": "2025-05-01", "worth_remembering": True, "about": "membre"},
        {"text": "Il pleut.", "category": "autre", "importance": 1, "valid_from": None, "worth_remembering": False,
         "about": "membre"},
        {"text": "Sa fille a changé d'employeur.", "category": "situation", "importance": 2, "valid_from": None,
         "worth_remembering": True, "about": "proche"},
    ], "summary": ""}), FactsAnswer)
    kept, set_aside, not_member = facts(answer)
    assert (set_aside, not_member, len(kept)) == (1, 1, 1) and kept[0].text == "Le client habite <ADDRESS_1>."
    assert kept[0].valid_from == datetime(2025, 5, 1, tzinfo=UTC)


@pytest.mark.parametrize(("content", "reason"), [
    ("", "malformed_json"), ("{", "malformed_json"), ("null", "schema_violation"),
    ('{"summary": 3}', "schema_violation"), ('{"summary": "ok", "extra": 1}', "schema_violation"),
])
def test_rejections_carry_a_reason_and_no_text(content: str, reason: str) -> None:
    with pytest.raises(AnswerRejected) as caught:
        parse(content, SummaryAnswer)
    assert caught.value.reason == reason and caught.value.__cause__ is None
    assert str(caught.value) == reason

