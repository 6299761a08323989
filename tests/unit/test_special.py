from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from carnet.domain.pii.special import special_categories
from carnet.services.memories.special import CategoryPolicy, SpecialPolicy
from carnet.settings.root import SpecialCategoryPolicy


@pytest.mark.parametrize(("text", "expected"), [
    ("Sa fille est hospitalisée depuis lundi, arrêt maladie de 3 semaines.", ("health",)),
    ("Il est en fauteuil roulant, dossier MDPH en cours.", ("disability",)),
    ("Elle ne peut pas venir pendant le ramadan.", ("religion",)),
    ("Le membre est délégué syndical CGT.", ("union",)),
    ("Placé en garde à vue hier, il a un casier judiciaire.", ("judicial",)),
    ("Le membre préfère être appelé le matin.", ()),
    ("Le traitement du dossier prend 3 jours ; opération immobilière ; parti en vacances.", ()),
])
def test_rules_flag_special_categories_and_leave_ordinary_notes_alone(text: str, expected: tuple[str, ...]) -> None:
    assert special_categories(text) == expected


def test_policy_hides_categories_from_agents_only_and_shortens_retention() -> None:
    policy = SpecialPolicy({"*": CategoryPolicy({"health": 30}, frozenset({"religion"})),
                            "banque": CategoryPolicy({}, frozenset())})
    assert policy.hidden_for("assur", ["agent"]) == ("religion",)
    assert policy.hidden_for("assur", ["agent", "dpo"]) == ()
    assert policy.hidden_for("banque", ["agent"]) == ()
    start = datetime(2026, 1, 1, tzinfo=UTC)
    assert policy.expires_at("assur", ("health",), start, None) == start + timedelta(days=30)
    assert policy.expires_at("assur", ("health",), start, start + timedelta(days=10)) == start + timedelta(days=10)
    assert policy.expires_at("assur", (), start, None) is None
    assert policy.expires_at("banque", ("health",), start, None) is None


def test_settings_refuse_unknown_categories() -> None:
    with pytest.raises(ValidationError):
        SpecialCategoryPolicy(hidden_from_agents=["astrology"])
    with pytest.raises(ValidationError):
        SpecialCategoryPolicy(retention_days={"health": 0})
