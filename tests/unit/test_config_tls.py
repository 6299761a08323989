"""CARNET_TLS__*: consistency, files checked at start, clear listening refused in production, uvicorn's arguments."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest
import uvicorn
from pydantic import ValidationError

from carnet.entrypoints.http.tls import uvicorn_tls_options
from carnet.settings.root import Environment, Settings, TlsSettings, TlsVersion
from tests.support.tls import TlsFiles, make_tls

PRODUCTION = {"environment": Environment.PRODUCTION, "api_key_pepper": "p3pper-of-32-random-bytes-base64",
              "kms_backend": "vault"}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> TlsFiles:
    return make_tls(tmp_path_factory.mktemp("tls"))


def test_cert_and_key_go_together_and_client_certs_need_a_ca(files: TlsFiles) -> None:
    with pytest.raises(ValidationError, match="CERT_FILE and CARNET_TLS__KEY_FILE go together"):
        TlsSettings(cert_file=files.cert)
    with pytest.raises(ValidationError, match="REQUIRE_CLIENT_CERT needs CARNET_TLS__CLIENT_CA_FILE"):
        TlsSettings(cert_file=files.cert, key_file=files.key, require_client_cert=True)
    with pytest.raises(ValidationError, match="CLIENT_CA_FILE needs CARNET_TLS__CERT_FILE"):
        TlsSettings(client_ca_file=files.ca_cert)


def test_a_missing_file_is_refused_at_start(files: TlsFiles, tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match=r"CARNET_TLS__KEY_FILE: no readable file at .*absent\.key"):
        TlsSettings(cert_file=files.cert, key_file=tmp_path / "absent.key")


def test_production_refuses_clear_listening_off_loopback(files: TlsFiles) -> None:
    with pytest.raises(ValidationError, match=r"listening in clear on 0\.0\.0\.0"):
        Settings(**PRODUCTION, host="0.0.0.0")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match=r"listening in clear on carnet\.internal"):
        Settings(**PRODUCTION, host="carnet.internal")  # type: ignore[arg-type]
    for host in ("127.0.0.1", "::1", "localhost"):
        Settings(**PRODUCTION, host=host)  # type: ignore[arg-type]
    Settings(**PRODUCTION, host="0.0.0.0", tls=TlsSettings(terminated_upstream=True))  # type: ignore[arg-type]
    Settings(**PRODUCTION, host="0.0.0.0", tls=TlsSettings(cert_file=files.cert, key_file=files.key))  # type: ignore[arg-type]
    Settings(host="0.0.0.0")  # development: allowed


def test_tls_settings_from_the_environment(files: TlsFiles, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CARNET_TLS__CERT_FILE", str(files.cert))
    monkeypatch.setenv("CARNET_TLS__KEY_FILE", str(files.key))
    monkeypatch.setenv("CARNET_TLS__MIN_VERSION", "TLSv1.3")
    tls = Settings().tls
    assert tls.enabled and tls.min_version == "TLSv1.3"


@pytest.mark.parametrize("group", ["vault", "qdrant", "llm"])
def test_outbound_client_cert_and_key_go_together(group: str, files: TlsFiles) -> None:
    with pytest.raises(ValidationError, match=f"CARNET_{group.upper()}__CLIENT_CERT and .*CLIENT_KEY go together"):
        Settings.model_validate({group: {"client_cert": str(files.cert)}})


def _loaded(tls: TlsSettings) -> ssl.SSLContext:
    async def app(scope: object, receive: object, send: object) -> None:  # never called
        raise AssertionError

    config = uvicorn.Config(app, log_config=None, **uvicorn_tls_options(tls))
    config.load()
    assert config.ssl is not None
    return config.ssl


def test_uvicorn_gets_the_certificate_client_ca_and_a_minimum_version(files: TlsFiles) -> None:
    assert uvicorn_tls_options(TlsSettings()) == {}
    plain = _loaded(TlsSettings(cert_file=files.cert, key_file=files.key))
    assert plain.verify_mode is ssl.CERT_NONE and plain.minimum_version is ssl.TLSVersion.TLSv1_2
    mutual = _loaded(TlsSettings(cert_file=files.cert, key_file=files.key, client_ca_file=files.ca_cert,
                                 require_client_cert=True, min_version=TlsVersion.TLS1_3))
    assert mutual.verify_mode is ssl.CERT_REQUIRED and mutual.minimum_version is ssl.TLSVersion.TLSv1_3
    optional = _loaded(TlsSettings(cert_file=files.cert, key_file=files.key, client_ca_file=files.ca_cert))
    assert optional.verify_mode is ssl.CERT_OPTIONAL


def test_production_refuses_vault_over_plain_http() -> None:
    with pytest.raises(ValidationError, match="CARNET_VAULT__URL must use https"):
        Settings(**PRODUCTION, vault={"url": "http://openbao:8200"})  # type: ignore[arg-type]
