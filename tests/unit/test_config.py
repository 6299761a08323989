from pathlib import Path

import pytest
from pydantic import ValidationError

from carnet.settings.root import Environment, Settings


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


PEPPER = "p3pper-of-32-random-bytes-base64"  # 32 bytes, the production minimum


def test_production_refuses_dev_only_material() -> None:
    with pytest.raises(ValidationError, match="API_KEY_PEPPER"):
        Settings(environment=Environment.PRODUCTION)
    with pytest.raises(ValidationError, match="KMS_BACKEND=dev"):
        Settings(environment=Environment.PRODUCTION, api_key_pepper=PEPPER)
    s = Settings(environment=Environment.PRODUCTION, api_key_pepper=PEPPER, kms_backend="vault")
    assert s.environment is Environment.PRODUCTION


@pytest.mark.parametrize("pepper", ["x", "a-long-random-pepper", "p" * 31, "é" * 15])
def test_production_refuses_a_short_pepper_without_echoing_it(pepper: str) -> None:
    with pytest.raises(ValidationError, match="at least 32 bytes") as refused:
        Settings(environment=Environment.PRODUCTION, api_key_pepper=pepper, kms_backend="vault")
    assert len(pepper) < 5 or pepper not in str(refused.value)  # the value itself is never echoed


def test_a_short_pepper_is_still_accepted_in_development() -> None:
    assert Settings(api_key_pepper="x").api_key_pepper is not None


def test_production_refuses_pii_detection_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CARNET_PII__ENABLED", "false")
    with pytest.raises(ValidationError, match="CARNET_PII__ENABLED=false is refused"):
        Settings(environment=Environment.PRODUCTION, api_key_pepper=PEPPER, kms_backend="vault")
    assert Settings().pii.enabled is False  # development keeps it for benchmark comparisons


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


def test_the_key_listener_backoff_is_a_bounded_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CARNET_POSTGRES__LISTENER_BACKOFF_MAX", "2.5")
    assert Settings().postgres.listener_backoff_max == 2.5
    for bad in ("0.1", "301"):  # below the first pause (0.5 s), above the keyring's TTL
        monkeypatch.setenv("CARNET_POSTGRES__LISTENER_BACKOFF_MAX", bad)
        with pytest.raises(ValidationError):
            Settings()


@pytest.mark.parametrize(("given", "served"), [(None, True), ("true", True), ("false", False)])
def test_the_model_goes_to_a_child_process_in_a_server_unless_told(
        monkeypatch: pytest.MonkeyPatch, given: str | None, served: bool) -> None:
    monkeypatch.delenv("CARNET_EMBED_PROCESS", raising=False)
    if given is not None:
        monkeypatch.setenv("CARNET_EMBED_PROCESS", given)
    s = Settings()
    assert s.serving_defaults().embed_process is served
    assert s.embed_process is (None if given is None else served)  # other commands: unset is in process
    assert s.serving_defaults().port == s.port and s.serving_defaults().serving_defaults() == s.serving_defaults()


def test_unset_builds_the_model_in_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    from carnet.bootstrap import models

    built: list[str] = []
    monkeypatch.setattr(models, "embedder_factory", lambda settings, threads: lambda: built.append("here"))
    models.build_embedder(Settings(embed_process=None))
    assert built == ["here"]


def test_the_embedded_shard_keeps_as_many_records_decoded_as_set(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from carnet.adapters.vectors.qdrant_edge import CACHED_RECORDS
    from carnet.bootstrap.stores import build_index

    assert Settings().record_cache_size == CACHED_RECORDS  # the adapter's default is the setting's
    for value, kept in (("0", 0), ("25", 25)):
        monkeypatch.setenv("CARNET_RECORD_CACHE_SIZE", value)
        index = build_index(Settings(data_dir=tmp_path / value), 8)
        try:
            assert index._cache._capacity == kept  # type: ignore[attr-defined]
        finally:
            index.close()
    monkeypatch.setenv("CARNET_RECORD_CACHE_SIZE", "-1")
    with pytest.raises(ValidationError):
        Settings()
