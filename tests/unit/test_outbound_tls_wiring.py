"""Each outbound link gets its CA bundle and client certificate from the settings (bootstrap's wiring)."""

from __future__ import annotations

from typing import Any

import pytest

from carnet.bootstrap import keys, models, stores
from carnet.settings.root import Settings
from tests.support.tls import MtlsFiles, make_mtls


class _Captured(Exception):
    def __init__(self, kwargs: dict[str, Any]) -> None:
        self.kwargs = kwargs


def _capture(*_args: Any, **kwargs: Any) -> Any:
    raise _Captured(kwargs)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> MtlsFiles:
    return make_mtls(tmp_path_factory.mktemp("tls"))


def _pair(files: MtlsFiles) -> dict[str, str]:
    return {"ca_cert": str(files.server.ca_cert), "client_cert": str(files.client_cert),
            "client_key": str(files.client_key)}


def test_vault_gets_its_ca_and_client_certificate(files: MtlsFiles, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("carnet.adapters.kms.vault_transit.connect", _capture)
    vault = {"auth": "token", "token": "t", **_pair(files)}
    settings = Settings.model_validate({"kms_backend": "vault", "vault": vault})
    with pytest.raises(_Captured) as got:
        keys.build_kms(settings)
    assert got.value.kwargs["ca_cert"] == files.server.ca_cert
    assert got.value.kwargs["client_cert"] == (files.client_cert, files.client_key)


def test_qdrant_gets_its_ca_and_client_certificate(files: MtlsFiles, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("carnet.adapters.vectors.qdrant_server.connect", _capture)
    settings = Settings.model_validate({"vector_backend": "server", "qdrant": _pair(files)})
    with pytest.raises(_Captured) as got:
        stores.build_index(settings, 384)
    assert got.value.kwargs["ca_cert"] == files.server.ca_cert
    assert got.value.kwargs["client_cert"] == (files.client_cert, files.client_key)


def test_the_llm_gets_its_ca_and_client_certificate(files: MtlsFiles, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("carnet.adapters.extractors.mistral.MistralExtractor", _capture)
    settings = Settings.model_validate({"extractor": "mistral", "llm": _pair(files)})
    with pytest.raises(_Captured) as got:
        models.build_extractor(settings)
    assert got.value.kwargs["ca_cert"] == files.server.ca_cert
    assert got.value.kwargs["client_cert"] == (files.client_cert, files.client_key)


def test_no_client_certificate_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("carnet.adapters.vectors.qdrant_server.connect", _capture)
    with pytest.raises(_Captured) as got:
        stores.build_index(Settings(vector_backend="server"), 384)  # type: ignore[arg-type]
    assert got.value.kwargs["client_cert"] is None
