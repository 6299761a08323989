"""The LoCoMo loader: session dates, evidence normalisation, turn texts (inline data, not the dev file)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from carnet.bench.locomo_data import (
    Turn,
    UnknownConversation,
    load,
    normalize_evidence,
    parse_conversation,
    parse_session_date,
    select,
    turn_context,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("10:37 am on 27 June, 2023", datetime(2023, 6, 27, 10, 37, tzinfo=UTC)),
        ("12:09 am on 13 September, 2023", datetime(2023, 9, 13, 0, 9, tzinfo=UTC)),
        ("12:30 pm on 1 January, 2024", datetime(2024, 1, 1, 12, 30, tzinfo=UTC)),
        ("4:04 PM on 20 January 2023", datetime(2023, 1, 20, 16, 4, tzinfo=UTC)),
        ("  9:05 am on 3 Sept, 2022 ", datetime(2022, 9, 3, 9, 5, tzinfo=UTC)),
    ],
)
def test_session_dates_parse_to_utc(raw: str, expected: datetime) -> None:
    assert parse_session_date(raw) == expected


@pytest.mark.parametrize("raw", ["", "8 May 2023", "1:56 pm on 8 Mayo, 2023", "13:56 pm on 8 May, 2023",
                                 "1:56 pm on 31 February, 2023"])
def test_bad_session_dates_are_refused(raw: str) -> None:
    with pytest.raises(ValueError):
        parse_session_date(raw)


VALID = frozenset({"D1:3", "D8:6", "D9:17", "D11:26", "D30:5", "D2:1"})


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (["D1:3"], ("D1:3",)),
        (["D8:6; D9:17"], ("D8:6", "D9:17")),  # two ids in one string
        (["D8:6,D9:17"], ("D8:6", "D9:17")),
        (["D8:6 D9:17"], ("D8:6", "D9:17")),
        (["D:11:26"], ("D11:26",)),  # stray colon
        (["D30:05"], ("D30:5",)),  # zero-padded turn number
        (["d2:1"], ("D2:1",)),
        (["D1:3", "D1:3", "D01:03"], ("D1:3",)),  # duplicates collapse, order kept
        (["D99:1", "D1:3"], ("D1:3",)),  # not a turn of this conversation
        (["D99:1"], ()),
        (["", "nonsense", "D1"], ()),
        ([], ()),
    ],
)
def test_evidence_is_normalised(raw: list[str], expected: tuple[str, ...]) -> None:
    assert normalize_evidence(raw, VALID) == expected


def _conversation() -> dict[str, object]:
    return {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_2_date_time": "9:00 am on 2 March, 2023",
            "session_2": [{"speaker": "Ben", "dia_id": "D2:1", "text": "Back from Lisbon!"}],
            "session_1_date_time": "1:56 pm on 8 May, 2022",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "Did you adopt the dog?"},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "Yes, twice!",
                 "blip_caption": "a photo of a dog on a couch", "img_url": ["x"]},
            ],
        },
        "qa": [
            {"question": "Did Ben adopt a dog?", "answer": "yes", "evidence": ["D1:2"], "category": 4},
            {"question": "Where was Ben?", "answer": "Lisbon", "evidence": ["D:2:1; D7:1"], "category": 1},
            {"question": "What?", "adversarial_answer": "x", "evidence": ["D9:9"], "category": 5},
        ],
    }


def test_a_conversation_is_parsed_in_session_order() -> None:
    conv = parse_conversation(_conversation())
    assert conv.sample_id == "conv-x"
    assert conv.speakers == ("Ana", "Ben")
    assert [s.number for s in conv.sessions] == [1, 2]
    assert conv.sessions[0].at == datetime(2022, 5, 8, 13, 56, tzinfo=UTC)
    assert conv.dia_ids() == {"D1:1", "D1:2", "D2:1"}
    assert [q.evidence for q in conv.questions] == [("D1:2",), ("D2:1",), ()]
    assert [q.category for q in conv.questions] == [4, 1, 5]
    assert conv.session_id(conv.sessions[1]) == "conv-x/session_2"


def test_turn_text_carries_speaker_and_caption() -> None:
    conv = parse_conversation(_conversation())
    first, second = conv.sessions[0].turns
    assert first.memory_text() == "Ana: Did you adopt the dog?"
    assert second.memory_text() == "Ben: Yes, twice! [shares a photo of a dog on a couch]"


def test_context_is_the_preceding_turns_of_the_session() -> None:
    turns = [Turn(f"D1:{i}", "Ana", f"turn {i}") for i in range(1, 5)]
    assert turn_context(turns, 0, 1) is None
    assert turn_context(turns, 2, 1) == "Ana: turn 2"
    assert turn_context(turns, 3, 2) == "Ana: turn 2 Ana: turn 3"
    assert turn_context(turns, 3, 0) is None
    assert turn_context(turns, 3, 2, max_chars=8) == ": turn 3"


def test_load_reads_a_file(tmp_path: Path) -> None:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([_conversation()]), encoding="utf-8")
    [conv] = load(path)
    assert sum(len(s.turns) for s in conv.sessions) == 3


def test_a_session_without_date_is_refused() -> None:
    raw = _conversation()
    del raw["conversation"]["session_1_date_time"]  # type: ignore[index]
    with pytest.raises(ValueError, match="no date"):
        parse_conversation(raw)


def test_conversations_are_selected_by_sample_id_in_file_order() -> None:
    first = parse_conversation(_conversation())
    second = parse_conversation({**_conversation(), "sample_id": "conv-b"})
    assert select([first, second], None) == [first, second]
    assert select([first, second], ["conv-b", first.sample_id]) == [first, second]
    assert select([first, second], ["conv-b"]) == [second]
    with pytest.raises(UnknownConversation, match="conv-zz"):
        select([first, second], ["conv-zz"])
