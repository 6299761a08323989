"""The profile tier of assemble on the real embedded stack: whatever the query, within its budget,
current facts only, the special-category policy applied, never repeated in the ranked facts."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from carnet.bootstrap.container import Container
from carnet.domain.budget import TierBudget
from carnet.services.memories.assemble import Context, assemble, budgets
from carnet.services.memories.profile import CANDIDATES
from carnet.services.memories.remember import NewMemory, insert_new, remember
from carnet.services.scope import scope_for
from tests.integration.test_tamper import _date_out_of_range, _flip_ciphertext_byte

AT = datetime(2025, 3, 1, tzinfo=UTC)
PROFILE = [
    "Le membre est malentendant : lui parler lentement et fort.",
    "Il refuse toute sollicitation commerciale.",
    "Joignable de préférence le matin sur son portable.",
]
OTHERS = [
    "Le membre a un contrat auto formule tous risques.",
    "Le membre habite à Rennes depuis 2019.",
    "Sinistre bris de glace ouvert en janvier.",
]


def _store(c: Container, subject: str, texts: list[str]) -> list[str]:
    out = remember(
        c.deps, tenant="t", subject_id=subject, actor="a", items=[NewMemory(text=t, occurred_at=AT) for t in texts]
    )
    return [o.memory.id for o in out]


def _assemble(c: Container, subject: str, query: str, hidden: tuple[str, ...] = (), **over: int) -> Context:
    return assemble(
        c.deps,
        tenant="t",
        subject_id=subject,
        query=query,
        hidden_special=hidden,
        budget=budgets(c.deps, overrides=dict(over)),
    )


def test_profile_tier_is_there_whatever_the_query_and_not_repeated(container: Container) -> None:
    _store(container, "P1", PROFILE + OTHERS)
    for query in ("Quel est son contrat auto ?", "Où habite-t-il ?", "Bonjour"):
        ctx = _assemble(container, "P1", query)
        assert sorted(m.text for m in ctx.profile) == sorted(PROFILE)
        assert not {m.id for m in ctx.profile} & {r.memory.id for r in ctx.memories}
        assert ctx.stats["profile_count"] == 3
        profile_part = ctx.prompt.split("#### Profil")[1].split("####")[0]
        assert all(t in profile_part for t in PROFILE)
        assert "(accessibilité)" in profile_part and "(consentement)" in profile_part


def test_past_the_candidates_the_newest_facts_are_the_ones_shown(container: Container) -> None:
    """More current profile facts than the tier reads: the newest are chosen by the engine among all
    of them, not among the first ones by record id (which are in no order of time)."""
    n = 4 * CANDIDATES
    items = [NewMemory(text=f"Joignable de préférence par SMS au numéro de la fiche, note {i}.",
                       occurred_at=AT + timedelta(days=i)) for i in range(n)]
    assert insert_new(container.deps, tenant="t", subject_id="P9", items=items, actor="a") == n
    ctx = _assemble(container, "P9", "Bonjour", max_profile=5)
    assert [m.text for m in ctx.profile] == [items[n - 1 - i].text for i in range(5)]


@pytest.mark.parametrize("damage", [_flip_ciphertext_byte, _date_out_of_range], ids=["ciphertext", "date"])
def test_a_damaged_profile_fact_is_left_out_and_counted_the_others_shown(container: Container,
                                                                         damage: Any) -> None:
    """A date no datetime holds sorts first on the engine's index: it is still only left out."""
    ids = _store(container, "P8", PROFILE)
    damage(container, scope_for(container.deps, "t", "P8"), ids[0])
    container.keyring.forget("t", scope_for(container.deps, "t", "P8").subject)
    ctx = _assemble(container, "P8", "Bonjour")
    assert sorted(m.text for m in ctx.profile) == sorted(PROFILE[1:])
    assert [u.id for u in ctx.unreadable] == [ids[0]] and ctx.stats["unreadable"] == 1


def test_profile_tier_keeps_to_its_budget(container: Container) -> None:
    _store(container, "P2", PROFILE + OTHERS)
    one = _assemble(container, "P2", "Son contrat ?", max_profile=1)
    assert len(one.profile) == 1
    few = _assemble(container, "P2", "Son contrat ?", profile_tokens=30)
    assert int(few.stats["profile_tokens"]) <= 30 and len(few.profile) < 3


def test_superseded_profile_facts_are_left_out(container: Container) -> None:
    ids = _store(container, "P3", PROFILE)
    scope = scope_for(container.deps, "t", "P3")
    (old,) = container.deps.index.get(scope, [ids[1]])
    container.deps.index.replace_payload(scope, [old.superseded(by=ids[0], at=AT)])
    ctx = _assemble(container, "P3", "Je peux lui proposer une offre ?")
    assert "Il refuse toute sollicitation commerciale." not in [m.text for m in ctx.profile]
    assert len(ctx.profile) == 2


def test_special_category_policy_applies_to_the_profile(container: Container) -> None:
    _store(container, "P4", PROFILE)  # deafness is a disability (GDPR art. 9)
    hidden = _assemble(container, "P4", "Comment lui parler ?", hidden=("disability",))
    assert all("malentendant" not in m.text for m in hidden.profile) and len(hidden.profile) == 2
    assert "malentendant" not in hidden.prompt
    shown = _assemble(container, "P4", "Comment lui parler ?")
    assert any("malentendant" in m.text for m in shown.profile)


def test_profile_tier_turned_off(container: Container) -> None:
    _store(container, "P5", PROFILE + OTHERS)
    deps = replace(container.deps, assemble=replace(container.deps.assemble, profile=TierBudget(0, 0)))
    ctx = assemble(deps, tenant="t", subject_id="P5", query="Comment lui parler ?", budget=budgets(deps, overrides={}))
    assert ctx.profile == [] and "Profil" not in ctx.prompt
    assert any("malentendant" in r.memory.text for r in ctx.memories)  # ranked like any fact again


def test_a_rectified_text_is_classified_again(container: Container) -> None:
    from carnet.services.rights.rectify import Correction, rectify

    ids = _store(container, "P6", OTHERS)
    assert _assemble(container, "P6", "Son contrat ?").profile == []
    rectify(
        container.deps,
        tenant="t",
        subject_id="P6",
        memory_id=ids[1],
        actor="dpo",
        correction=Correction(text="Le membre ne souhaite plus être démarché par téléphone."),
    )
    assert [m.id for m in _assemble(container, "P6", "Son contrat ?").profile] == [ids[1]]
    rectify(
        container.deps,
        tenant="t",
        subject_id="P6",
        memory_id=ids[1],
        actor="dpo",
        correction=Correction(text="Le membre habite à Brest depuis 2024."),
    )
    assert _assemble(container, "P6", "Son contrat ?").profile == []
