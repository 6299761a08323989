import pytest
from pydantic import ValidationError

from carnet.config import Environment, Settings


def test_nested_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CARNET_PORT", "9000")
    monkeypatch.setenv("CARNET_SCORING__W_RECENCY", "0.2")
    s = Settings()
    assert s.port == 9000 and s.scoring.w_recency == 0.2


@pytest.mark.parametrize("name", ["CARNET_PROT", "CARNET_SCORING__W_RECENT", "CARNET_NOPE__X"])
def test_a_mistyped_variable_is_refused(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv(name, "1")
    with pytest.raises(ValidationError, match="unknown setting"):
        Settings()


def test_production_refuses_dev_only_material() -> None:
    with pytest.raises(ValidationError, match="API_KEY_PEPPER"):
        Settings(environment=Environment.PRODUCTION)
    with pytest.raises(ValidationError, match="KMS_BACKEND=dev"):
        Settings(environment=Environment.PRODUCTION, api_key_pepper="a-long-random-pepper")
    s = Settings(environment=Environment.PRODUCTION, api_key_pepper="a-long-random-pepper", kms_backend="vault")
    assert s.environment is Environment.PRODUCTION


def test_pii_patterns_and_special_categories_come_from_json_and_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CARNET_PII__PATTERNS", '{"*": {"CONTRACT": "\\\\bCTR-\\\\d{6}\\\\b"}}')
    monkeypatch.setenv("CARNET_SPECIAL_CATEGORIES", '{"*": {"retention_days": {"health": 730}}}')
    s = Settings()
    assert s.pii.patterns == {"*": {"CONTRACT": r"\bCTR-\d{6}\b"}}
    assert s.special_categories["*"].retention_days == {"health": 730}
    monkeypatch.setenv("CARNET_PII__PATTERNS", '{"*": {"CONTRACT": "CTR-(\\\\d"}}')
    with pytest.raises(ValidationError, match="not a valid regular expression"):
        Settings()
    monkeypatch.setenv("CARNET_PII__PATTERNS", '{"*": {"contract": "x"}}')
    with pytest.raises(ValidationError, match="upper-case"):
        Settings()
