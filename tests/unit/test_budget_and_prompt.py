from dataclasses import replace
from datetime import UTC, datetime

import pytest

from carnet.domain.budget import TierBudget, pack
from carnet.domain.prompt import preamble, render
from carnet.domain.records import Kind, Memory, Scope


def test_pack_respects_item_and_token_budgets() -> None:
    items = [5, 5, 5, 5]
    chosen, used = pack(items, TierBudget(max_items=3, max_tokens=100), cost=lambda x: x)
    assert chosen == [5, 5, 5] and used == 15
    chosen, used = pack(items, TierBudget(max_items=10, max_tokens=12), cost=lambda x: x)
    assert chosen == [5, 5] and used == 10


def test_pack_skips_an_item_too_long_but_keeps_shorter_ones() -> None:
    chosen, used = pack([50, 3, 4], TierBudget(max_items=10, max_tokens=10), cost=lambda x: x)
    assert chosen == [3, 4] and used == 7


def test_lazy_pack_opens_only_what_it_may_take_and_chooses_as_the_eager_one() -> None:
    opened: list[list[int]] = []

    def open_chunk(chunk: object) -> list[int]:
        opened.append(list(chunk))  # type: ignore[call-overload]
        return list(chunk)  # type: ignore[call-overload]

    items = [4, 50, 3, 60, 2, 1, 9, 9]
    budget = TierBudget(max_items=3, max_tokens=10)
    assert pack(items, budget, lambda x: x, open_chunk=open_chunk) == pack(items, budget, lambda x: x)
    # 3 places: open 3 (4 fits, 50 skipped, 3 fits), then 1 (60 skipped), then 1 (2 fits): full
    assert opened == [[4, 50, 3], [60], [2]]
    opened.clear()
    two = TierBudget(max_items=2, max_tokens=10)
    assert pack([1, 1, 1, 1, 1], two, lambda x: x, open_chunk=open_chunk)[0] == [1, 1]
    assert opened == [[1, 1]]


def test_budget_refuses_negative_values() -> None:
    with pytest.raises(ValueError):
        TierBudget(-1, 10)


def _m(subject: str, text: str, day: int) -> Memory:
    at = datetime(2025, 3, day, tzinfo=UTC)
    return Memory(id=f"{subject}-{day}", scope=Scope("t", subject), kind=Kind.FACT, text=text,
                  pseudo_text=text, recorded_at=at, valid_from=at, updated_at=at)


@pytest.mark.parametrize("locale", ["fr", "en"])
def test_stable_part_is_byte_identical_across_subjects_and_calls(locale: str) -> None:
    a = render(facts=[_m("s1", "habite à Lyon", 1)], episodes=[], procedures=[], locale=locale)
    b = render(facts=[_m("s2", "budget 750 euros", 2), _m("s2", "préfère le courriel", 3)],
               episodes=[replace(_m("s2", "appel sinistre", 4), kind=Kind.EPISODE)], procedures=[], locale=locale)
    stable = preamble(locale)
    assert a.startswith(stable) and b.startswith(stable)
    # Nothing volatile leaks into the stable part: no record id, no subject, no text.
    for volatile in ("s1", "s2", "Lyon", "750"):
        assert volatile not in stable


def test_volatile_records_come_last_with_their_dates() -> None:
    out = render(facts=[_m("s", "habite à Villeurbanne", 9)], episodes=[], procedures=[], locale="fr")
    assert out.rstrip().endswith("- [9 mars 2025] « habite à Villeurbanne »")


@pytest.mark.parametrize("locale", ["fr", "en"])
def test_profile_section_follows_the_procedures_and_keeps_the_stable_part(locale: str) -> None:
    profile = [(_m("s", "il est malentendant", 2), ("accessibility",)), (_m("s", "note", 3), ())]
    out = render(facts=[_m("s", "habite à Lyon", 1)], episodes=[], procedures=[], locale=locale, profile=profile)
    assert out.startswith(preamble(locale))
    procedures, rest = out.split("il est malentendant")[0], out.split("il est malentendant")[1]
    assert "Lyon" not in procedures and "Lyon" in rest  # profile before the ranked facts
    label = "accessibilité" if locale == "fr" else "accessibility"
    assert f"({label}) « il est malentendant »" in out
    assert "] « note »" in out  # a record without a kind gets no label
    off = render(facts=[_m("s", "habite à Lyon", 1)], episodes=[], procedures=[], locale=locale)
    assert "rofil" not in off  # no tier, no section


def test_a_contested_fact_names_the_newer_note_of_the_block_outside_its_quote() -> None:
    new = _m("s", "a déménagé à Grenoble", 20)
    old = replace(_m("s", "habite à Lyon", 1), contested_by=(new.id, "not-in-the-block"))
    out = render(facts=[new, old], episodes=[], procedures=[], locale="fr")
    assert "- [1 mars 2025] (peut-être remplacé par la note du 20 mars 2025) « habite à Lyon »" in out
    assert "- [20 mars 2025] « a déménagé à Grenoble »" in out
    alone = render(facts=[old], episodes=[], procedures=[], locale="en")  # its newer note not in the block
    assert "- [1 March 2025] « habite à Lyon »" in alone and "replaced" not in alone
    profile = render(facts=[new], episodes=[], procedures=[], locale="en", profile=[(old, ())])
    assert "(may be replaced by the note of 20 March 2025) « habite à Lyon »" in profile
