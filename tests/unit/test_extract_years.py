"""Dates said without their year, written out in full from the message's time (``years``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from carnet.domain.extraction.rules.pipeline import extract
from carnet.domain.extraction.rules.years import with_years
from carnet.domain.intake import Message

JULY = datetime(2025, 7, 22, 11, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("said", "written"),
    [
        ("Le membre a déposé le dossier le 22 avril.", "Le membre a déposé le dossier le 22 avril 2025."),
        ("L'avenant prend effet le 1er juin.", "L'avenant prend effet le 1er juin 2025."),
        ("Il part du 20 décembre au 5 janvier.", "Il part du 20 décembre 2025 au 5 janvier 2026."),
        ("Décédé le 24 mars 2024, le 3 mars.", "Décédé le 24 mars 2024, le 3 mars 2025."),
        ("Le versement est parti hier.", "Le versement est parti hier (21 juillet 2025)."),
        ("Elle est tombée avant-hier.", "Elle est tombée avant-hier (20 juillet 2025)."),
        ("Un hôtel pour ce soir, l'expert passe après-demain.",
         "Un hôtel pour ce soir (22 juillet 2025), l'expert passe après-demain (24 juillet 2025)."),
        ("Aujourd’hui je rappelle, demain j'envoie.",
         "Aujourd’hui (22 juillet 2025) je rappelle, demain (23 juillet 2025) j'envoie."),
        ("Rendez-vous mardi 15 juillet à 9h.", "Rendez-vous mardi 15 juillet 2025 à 9h."),
        ("Le 31 février.", "Le 31 février."),  # no such day: left as said
        ("Née le 3 avril 97.", "Née le 3 avril 97."),  # a two-digit year is a year
        ("Un accrochage avant-hier, le 20 juillet.", "Un accrochage avant-hier, le 20 juillet 2025."),
    ],
)
def test_a_day_and_month_get_their_year(said: str, written: str) -> None:
    assert with_years(said, JULY) == written


def test_a_day_more_than_half_a_year_after_the_call_is_from_the_year_before() -> None:
    assert with_years("Depuis le 3 décembre.", datetime(2026, 1, 15, tzinfo=UTC)) == "Depuis le 3 décembre 2025."


def test_a_weekday_and_day_get_the_latest_such_day_before_the_call() -> None:
    assert with_years("Vendredi, le 9, en sortant.", datetime(2026, 1, 12, tzinfo=UTC)) == (
        "Vendredi 9 janvier 2026, en sortant."
    )
    # no Friday the 9th in the eight weeks before: left as said
    assert with_years("Vendredi, le 9, en sortant.", JULY) == "Vendredi, le 9, en sortant."


def test_without_the_message_time_nothing_changes() -> None:
    assert with_years("Le 22 avril.", None) == "Le 22 avril."


@given(st.text(max_size=120), st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2090, 1, 1)))
def test_completing_twice_changes_nothing_more_and_keeps_every_word(text: str, at: datetime) -> None:
    at = at.replace(tzinfo=UTC)
    once = with_years(text, at)
    assert with_years(once, at) == once
    cursor = 0
    for ch in text:  # what was said is all still there, in order: only years and dates were added
        cursor = once.index(ch, cursor) + 1 if ch in once[cursor:] else -1
        assert cursor != -1


@given(st.sampled_from(["le 3 mars", "le 1er juin", "du 20 décembre au 5 janvier", "hier", "après-demain",
                        "ce soir"]),
       st.integers(min_value=0, max_value=3650))
def test_a_completed_day_is_within_a_year_of_the_call(said: str, days: int) -> None:
    at = datetime(2020, 1, 1, tzinfo=UTC) + timedelta(days=days)
    years = {int(w) for w in with_years(said, at).replace(")", " ").split() if w.isdigit() and len(w) == 4}
    assert years and all(at.year - 1 <= y <= at.year + 1 for y in years)


def test_the_rule_extractor_writes_the_year_into_the_fact() -> None:
    messages = [Message(role="user", content="J'ai déposé mon dossier le 22 avril, à la Banque de France.",
                        at=datetime(2025, 5, 6, tzinfo=UTC))]  # fmt: skip
    facts = extract(messages, session_id=None, locale="fr").facts
    assert [f.text for f in facts] == ["Le membre a déposé son dossier le 22 avril 2025, à la Banque de France."]
