"""The labelled LLM of ``bench scenarios --llm labels`` (``bench/llm_labels``): it answers each request the
Mistral extractor makes, built by the extractor's own prompt code, from the file's labels: the facts said
in the request's call (and in the part of it the request holds), the labelled supersessions."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from carnet.bench.llm_labels import Labels
from carnet.domain.extraction import transcript
from carnet.domain.extraction.prompts import facts_prompt, obsolete_prompt
from carnet.domain.intake import Message


def _call(at: str, *turns: tuple[str, str]) -> dict[str, Any]:
    return {"session_id": f"s-{at}", "at": at, "messages": [{"role": r, "content": c, "at": at} for r, c in turns]}


MOVE = _call("2025-03-02T10:00:00+01:00",
             ("advisor", "Bonjour, que puis-je faire pour vous ?"),
             ("user", "J'ai déménagé à Rennes, 4 rue des Tilleuls."),
             ("advisor", "C'est noté. Votre cotisation habitation passe à 32,50 euros par mois."),
             ("user", "Merci, au revoir."))
AGAIN = _call("2025-06-10T09:00:00+01:00",
              ("advisor", "Bonjour, je vous écoute."),
              ("user", "Je repars : j'habite désormais à Brest, quai Tabarly."),
              ("advisor", "Très bien, et votre fille reprend le contrat auto ?"),
              ("user", "Oui, c'est ma fille qui le conduit maintenant."))
SPEC = {"tenants": {"assur": {"subjects": {"M-1": {
    "facts": [{"at": "2025-03-02T10:10:00+01:00", "text": "Déménagement à Rennes, 4 rue des Tilleuls."},
              {"at": "2025-03-02T10:11:00+01:00", "text": "Cotisation habitation : 32,50 euros par mois."},
              {"at": "2025-06-10T09:10:00+01:00", "text": "Nouvelle adresse : Brest, quai Tabarly."},
              {"at": "2025-06-10T09:12:00+01:00", "text": "Le véhicule a changé de conducteur principal."}],
    "calls": [MOVE, AGAIN],
    "superseded": [{"old": 0, "by": 2}]}}}}}


def _labels(name: str = "a") -> Labels:
    labels = Labels()
    labels.add(name, SPEC)
    return labels


def _request(call: dict[str, Any], turns: slice = slice(None)) -> str:
    """The user message the Mistral extractor sends for these turns (its own prompt code)."""
    messages = [Message(m["role"], m["content"], datetime.fromisoformat(m["at"])) for m in call["messages"][turns]]
    return facts_prompt(transcript.lines(messages, "fr"), locale="fr").user


def _texts(answer: dict[str, Any]) -> list[str]:
    assert answer["summary"] == "" and all(f["about"] == "membre" and f["worth_remembering"] for f in answer["facts"])
    return [f["text"] for f in answer["facts"]]


def test_each_call_gets_the_facts_said_in_it_and_each_part_those_its_turns_say() -> None:
    labels = _labels()
    assert _texts(labels.answer("facts", _request(MOVE))) == [
        "Déménagement à Rennes, 4 rue des Tilleuls.", "Cotisation habitation : 32,50 euros par mois."]
    assert _texts(labels.answer("facts", _request(MOVE, slice(0, 2)))) == ["Déménagement à Rennes, 4 rue des Tilleuls."]
    # fact 3 shares too few words with any turn: it is placed in its call as a whole
    assert _texts(labels.answer("facts", _request(AGAIN))) == [
        "Nouvelle adresse : Brest, quai Tabarly.", "Le véhicule a changé de conducteur principal."]
    assert labels.by_call == 1
    pseudonymised = {**MOVE, "messages": [dict(m) for m in MOVE["messages"]]}
    pseudonymised["messages"][1]["content"] = "J'ai déménagé, j'habite au <ADDRESS_1>."  # its words now a placeholder
    assert len(_texts(labels.answer("facts", _request(pseudonymised)))) == 2  # inside the stretch the request holds
    assert (labels.tally.facts_requests, labels.tally.facts_answered, labels.tally.unmatched) == (4, 7, 0)
    labels.not_sent("\n".join(m["content"] for m in MOVE["messages"]))  # a call the turn filter kept back
    assert (labels.tally.facts_not_sent, labels.tally.facts_answered) == (2, 7)


def test_obsolete_names_what_the_labels_say_the_new_fact_makes_untrue() -> None:
    labels = _labels()
    known = ["Le client a déménagé à Rennes, 4 rue des Tilleuls.", "Cotisation habitation : 32,50 euros par mois."]
    asked = obsolete_prompt("Nouvelle adresse : Brest, quai Tabarly.", known, locale="fr").user
    assert labels.answer("obsolete", asked) == {"obsolete_ids": ["1"]}
    late = obsolete_prompt("Cotisation habitation : 32,50 euros par mois.", known[:1], locale="fr").user
    assert labels.answer("obsolete", late) == {"obsolete_ids": []}  # nothing labelled: nothing named
    assert labels.tally.named == 1


@pytest.mark.parametrize("error", [0.0, 0.5, 1.0])
def test_a_fallible_llm_turns_that_share_of_its_answers_wrong_the_same_each_time(error: float) -> None:
    labels = _labels()
    labels.error = error
    known = ["Le client a déménagé à Rennes, 4 rue des Tilleuls.", "Cotisation habitation : 32,50 euros par mois."]
    asked = obsolete_prompt("Nouvelle adresse : Brest, quai Tabarly.", known, locale="fr").user
    first = labels.answer("obsolete", asked)["obsolete_ids"]
    assert labels.answer("obsolete", asked)["obsolete_ids"] == first  # the same each run
    if error == 0.0:
        assert first == ["1"] and labels.tally.wrong == 0
    if error == 1.0:  # every answer wrong: the labelled one kept, the other named
        assert first == ["2"] and labels.tally.wrong == 4


def test_focus_keeps_each_file_to_its_own_calls() -> None:
    labels = _labels("a")
    other = {"tenants": {"assur": {"subjects": {"M-2": {
        "facts": [{"at": "2025-03-02T10:10:00+01:00", "text": "Le membre a un livret A."}],
        "calls": [_call("2025-03-02T10:00:00+01:00", ("user", "J'ai un livret A."), ("advisor", "Bien noté."))]}}}}}
    labels.add("b", other)
    labels.focus("b")
    assert _texts(labels.answer("facts", _request(MOVE))) == [] and labels.tally.unmatched == 1  # none of b's
    labels.focus(None)
    assert _texts(labels.answer("facts", _request(MOVE)))[0] == "Déménagement à Rennes, 4 rue des Tilleuls."


def test_notes_without_calls_are_told_as_the_members_turns_and_answered_whole() -> None:
    labels = Labels()
    labels.add("notes", {"tenants": {"assur": {"subjects": {"M-3": {"facts": [
        {"at": "2025-01-05T10:00:00+01:00", "text": "Nouvelle adresse : 4 rue des Lilas, Colmar."}]}}}}})
    told = [Message("user", "Nouvelle adresse : <ADDRESS_1>.", datetime.fromisoformat("2025-01-05T10:00:00+01:00"))]
    asked = facts_prompt(transcript.lines(told, "fr"), locale="fr").user  # most of its words are a placeholder now
    assert _texts(labels.answer("facts", asked)) == ["Nouvelle adresse : 4 rue des Lilas, Colmar."]
