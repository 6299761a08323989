"""A session's earlier messages as context (a call posted exchange by exchange): every extractor reads
them before the intake's own messages and takes no fact from them."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from carnet.adapters.extractors.gated import needs_llm
from carnet.adapters.extractors.mistral import MistralExtractor
from carnet.adapters.extractors.mistral_chat import Completion
from carnet.adapters.extractors.rules import RuleExtractor
from carnet.adapters.local.turn_file import TURN_FILE, load_turn_filter
from carnet.bootstrap.wiring import CALIBRATION_DIR
from carnet.domain.extraction import transcript
from carnet.domain.extraction.prompts import Prompt
from carnet.domain.intake import Message

AT = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
ASKED = [Message("user", "Bonjour, je voudrais changer la date de mon prélèvement mensuel.", AT),
         Message("assistant", "Bien sûr. À quelle date du mois souhaitez-vous être prélevé ?", AT)]
ANSWER = [Message("user", "Le 14, s'il vous plaît, après ma paie.", AT),
          Message("assistant", "C'est noté, ce sera le 14 à partir du mois prochain.", AT)]
TURNS = load_turn_filter(CALIBRATION_DIR / TURN_FILE)


def _texts(extractor: RuleExtractor, messages: list[Message], context: list[Message] = []) -> list[str]:  # noqa: B006
    return [f.text for f in extractor.extract(messages, session_id="s", locale="fr", context=context).facts]


def test_an_answer_is_read_with_the_question_asked_in_the_sessions_earlier_post() -> None:
    alone = _texts(RuleExtractor(), ANSWER)
    read = _texts(RuleExtractor(), ANSWER, ASKED)
    assert not any("À quelle date du mois" in t for t in alone)
    assert any(t.startswith("Le 14") and "À quelle date du mois souhaitez-vous être prélevé" in t for t in read)
    assert not any("changer la date" in t for t in read)  # the earlier post gave its facts already


messages = st.lists(st.builds(Message, st.sampled_from(["user", "assistant"]),
                              st.sampled_from([m.content for m in ASKED + ANSWER] + ["Merci, au revoir.",
                                                                                    "Mon numéro a changé."])),
                    max_size=6)


@settings(max_examples=60, deadline=None)
@given(context=messages)
def test_context_alone_yields_no_fact(context: list[Message]) -> None:
    for extractor in (RuleExtractor(), RuleExtractor(TURNS)):
        assert extractor.extract([], session_id="s", locale="fr", context=context).facts == ()


def test_the_turn_filter_weighs_the_new_turns_after_the_sessions_earlier_ones() -> None:
    """Gated: the LLM is asked only when a new turn is kept; with context, the turns of the earlier
    post count for the place and novelty of the new ones, never as turns to read."""
    assert needs_llm(TURNS, [], ASKED + ANSWER) is False
    kept = TURNS.keep(ASKED + ANSWER, ongoing=True)
    assert kept is not None
    assert needs_llm(TURNS, ANSWER, ASKED) is any(kept[len(ASKED):])


def test_tail_keeps_the_last_whole_lines_within_the_budget() -> None:
    lines = transcript.lines(ASKED + ANSWER, "fr")
    assert transcript.tail(lines, 10_000) == "\n".join(line.text for line in lines)
    last = transcript.tail(lines, len(lines[-1].text) + 1)
    assert last == lines[-1].text
    assert transcript.tail(lines, len(lines[-1].text)) == ""


@dataclass
class _Recording:
    sent: list[Prompt] = field(default_factory=list)

    def complete(self, operation: str, prompt: Prompt, *, schema_name: str, schema: dict[str, Any]) -> Completion:
        self.sent.append(prompt)
        return Completion(json.dumps({"facts": [], "summary": ""}), 10, 5)

    def close(self) -> None:
        pass


def test_mistral_is_shown_the_sessions_earlier_lines_before_the_intakes() -> None:
    extractor = MistralExtractor("http://127.0.0.1:9", None, "mistral-small-3.2")
    chat = _Recording()
    extractor._chat = chat  # type: ignore[assignment]
    try:
        extractor.extract(ANSWER, session_id="s", locale="fr", context=ASKED)
        extractor.extract(ANSWER, session_id="s", locale="fr")
    finally:
        extractor.close()
    with_context, alone = (p.user for p in chat.sent)
    asked = "À quelle date du mois souhaitez-vous être prélevé ?"
    assert asked in with_context and with_context.index(asked) < with_context.index("Le 14")
    assert asked not in alone


def test_with_context_no_turn_is_taken_for_the_calls_closing() -> None:
    """A post read after the session's earlier messages is not known to end the call: its turns are not
    the call's last two (goodbyes), whatever their place in what has been posted so far."""
    from carnet.domain.extraction.turn_features import FEATURES, turn_features

    closing = FEATURES.index("closing")
    assert [row[closing] for row in turn_features(ASKED + ANSWER)] == [0.0, 0.0, 1.0, 1.0]
    assert [row[closing] for row in turn_features(ASKED + ANSWER, ongoing=True)] == [0.0] * 4
    alone, after = TURNS.probabilities(ASKED + ANSWER), TURNS.probabilities(ASKED + ANSWER, ongoing=True)
    assert alone is not None and after is not None and alone[:2] == after[:2] and alone[2:] != after[2:]


def test_who_calls_for_the_member_is_known_from_the_sessions_earlier_post() -> None:
    """"J'ai changé de numéro" is the member's, unless the caller said earlier in the call that she holds a
    power of attorney for her father (the member): then it is the caller's own number."""
    earlier = [Message("user", "Bonjour, j'appelle pour mon père, <PERSON_2>, j'ai une procuration.", AT),
               Message("assistant", "Très bien, je vous écoute.", AT)]
    said = [Message("user", "J'ai changé de numéro, c'est maintenant le <PHONE_1>.", AT),
            Message("assistant", "C'est noté.", AT)]
    assert _texts(RuleExtractor(), said)[0].startswith("Le membre a changé de numéro")
    assert not _texts(RuleExtractor(), said, earlier)[0].startswith("Le membre")
