"""``carnet serve`` terminating TLS itself, with client certificates required (one real subprocess)."""

from __future__ import annotations

import ssl
from pathlib import Path

import httpx
import pytest

from carnet.bootstrap.stores import build_control_plane
from carnet.services.apikeys import create_key
from carnet.settings.root import Settings
from tests.support.serve import serve_process
from tests.support.tls import MtlsFiles, make_mtls


def _key(root: Path) -> str:
    plane = build_control_plane(Settings(data_dir=root / "data", key_dir=root / "keys"))
    try:
        return create_key(plane.catalog, plane.pepper, tenant="assur-nord", roles=["agent"])[0]
    finally:
        plane.catalog.close()


def _client(files: MtlsFiles, cert: tuple[Path, Path] | None, *, max_version: ssl.TLSVersion | None = None
            ) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(files.server.ca_cert))
    if cert is not None:
        context.load_cert_chain(*cert)
    if max_version is not None:
        context.maximum_version = max_version
    return context


@pytest.mark.slow
def test_https_with_client_certificates_and_the_api_key_still_required(tmp_path: Path) -> None:
    files = make_mtls(tmp_path / "tls")
    key = _key(tmp_path)
    env = {"CARNET_TLS__CERT_FILE": str(files.server.cert), "CARNET_TLS__KEY_FILE": str(files.server.key),
           "CARNET_TLS__CLIENT_CA_FILE": str(files.server.ca_cert), "CARNET_TLS__REQUIRE_CLIENT_CERT": "true",
           "CARNET_TLS__MIN_VERSION": "TLSv1.3"}
    trusted = _client(files, (files.client_cert, files.client_key))
    with serve_process(tmp_path, env, tls=trusted) as (base, _):
        assert base.startswith("https://")
        # 60 s: the first write waits on the model's first forward, which a busy 2-core machine may take
        # more than 10 s to give (a flake seen with other jobs running); the test is about TLS, not speed.
        with httpx.Client(base_url=base, verify=trusted, timeout=60) as client:
            memory = {"text": "Le membre habite à Lille.", "occurred_at": "2026-11-29T09:00:00+01:00"}
            r = client.post("/api/v1/subjects/c-1/memories", json=memory, headers={"Authorization": f"Bearer {key}"})
            assert r.status_code == 201, r.text
            # A client certificate is transport, not identity: the API key is still required.
            assert client.post("/api/v1/subjects/c-1/memories", json=memory).status_code == 401
        plain = base.replace("https://", "http://")
        with pytest.raises(httpx.TransportError):
            httpx.get(f"{plain}/healthz", timeout=5)
        with pytest.raises(httpx.ConnectError):  # the server's certificate is checked against the system store
            httpx.get(f"{base}/healthz", timeout=5)
        refused = {"no certificate": _client(files, None),
                   "a stranger CA's": _client(files, (files.stranger_cert, files.stranger_key)),
                   "TLS 1.2": _client(files, (files.client_cert, files.client_key),
                                      max_version=ssl.TLSVersion.TLSv1_2)}
        for why, context in refused.items():
            with pytest.raises(httpx.TransportError):  # refused in the handshake (TLS 1.3: at the first read)
                httpx.get(f"{base}/healthz", verify=context, timeout=5)
                pytest.fail(f"a client with {why} got through")


def _healthcheck_command() -> list[str]:
    """The image's HEALTHCHECK, as Docker reads it: the JSON exec form after CMD."""
    import json
    import re

    text = (Path(__file__).resolve().parents[2] / "deploy" / "Dockerfile").read_text()
    (cmd,) = re.findall(r"^HEALTHCHECK [^\n]*\\\n\s*CMD (\[.*\])$", text, flags=re.MULTILINE)
    parsed: list[str] = json.loads(cmd)
    return parsed


def _run_healthcheck(base: str, env: dict[str, str]) -> int:
    import subprocess
    import sys

    port = base.rsplit(":", 1)[1]
    command = [sys.executable if a == "python" else a for a in _healthcheck_command()]
    return subprocess.run(command, env={"CARNET_PORT": port, **env}, timeout=30).returncode


@pytest.mark.slow
def test_the_image_healthcheck_follows_the_listener(tmp_path: Path) -> None:
    """The Dockerfile's HEALTHCHECK code, run as is: healthy on a clear listener and on a TLS one (the
    loopback probe cannot verify a certificate that names the service), unhealthy when nothing listens."""
    files = make_mtls(tmp_path / "tls")
    with serve_process(tmp_path, {}) as (base, _):
        assert _run_healthcheck(base, {}) == 0
        assert _run_healthcheck(base, {"CARNET_TLS__CERT_FILE": "x"}) != 0  # https to a clear listener
    tls_env = {"CARNET_TLS__CERT_FILE": str(files.server.cert), "CARNET_TLS__KEY_FILE": str(files.server.key)}
    with serve_process(tmp_path, tls_env, tls=_client(files, None), log_name="tls.log") as (base, _):
        assert _run_healthcheck(base, tls_env) == 0
        assert _run_healthcheck(base, {}) != 0  # clear http to a TLS listener
    assert _run_healthcheck(base, tls_env) != 0  # stopped
