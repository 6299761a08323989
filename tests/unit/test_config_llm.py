"""The LLM extractor's settings: read from ``CARNET_EXTRACTOR`` and ``CARNET_LLM__*``, checked, refused
over plain http in production, and wired by ``build_extractor``."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from carnet.adapters.extractors.mistral import MistralExtractor
from carnet.bootstrap.models import build_extractor
from carnet.settings.root import Environment, ExtractorKind, Settings

PRODUCTION = {"environment": Environment.PRODUCTION, "api_key_pepper": "p3pper-of-32-random-bytes-base64",
              "kms_backend": "vault"}


def test_llm_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CARNET_EXTRACTOR", "mistral")
    monkeypatch.setenv("CARNET_LLM__BASE_URL", "https://vllm.internal:8443/")
    monkeypatch.setenv("CARNET_LLM__API_KEY", "s3cret")
    monkeypatch.setenv("CARNET_LLM__MODEL", "mistral-large")
    monkeypatch.setenv("CARNET_LLM__TIMEOUT", "12.5")
    monkeypatch.setenv("CARNET_LLM__MAX_RETRIES", "0")
    s = Settings()
    assert s.extractor is ExtractorKind.MISTRAL and s.llm.base_url == "https://vllm.internal:8443"
    assert s.llm.api_key is not None and s.llm.api_key.get_secret_value() == "s3cret"
    assert "s3cret" not in repr(s)
    assert (s.llm.model, s.llm.timeout, s.llm.max_retries) == ("mistral-large", 12.5, 0)


def test_the_default_is_the_rules() -> None:
    assert Settings().extractor is ExtractorKind.RULES


@pytest.mark.parametrize(("url", "message"), [("https://vllm:8000/v1", "without /v1"),
                                               ("vllm:8000", "http:// or https://")])
def test_a_wrong_base_url_is_refused(url: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Settings(llm={"base_url": url})


def test_production_refuses_an_llm_over_plain_http() -> None:
    with pytest.raises(ValidationError, match="CARNET_LLM__BASE_URL must use https"):
        Settings(**PRODUCTION, extractor="mistral", llm={"base_url": "http://vllm.internal:8000"})
    Settings(**PRODUCTION, extractor="mistral", llm={"base_url": "https://vllm.internal:8000"})
    Settings(**PRODUCTION, llm={"base_url": "http://unused:8000"})  # the rules send nothing anywhere


def test_build_extractor_wires_the_mistral_adapter() -> None:
    llm = {"base_url": "http://127.0.0.1:9", "api_key": "k", "gate": False}  # the gate: tests/unit/test_llm_gate.py
    extractor = build_extractor(Settings(extractor="mistral", llm=llm))
    try:
        assert isinstance(extractor, MistralExtractor) and extractor.name == "mistral"
    finally:
        extractor.close()
