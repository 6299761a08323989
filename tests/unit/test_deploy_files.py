"""deploy/: the Dockerfile, compose.yaml and the example settings say what Carnet and its operators expect.

Static checks only (no Docker engine runs here): every CARNET_* name is a real setting, the example
settings load, images are pinned, secrets come from files, published ports speak TLS, vLLM gets the
serving defaults of DESIGN.md "Models".
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import tomllib
import typing
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel, SecretStr

from carnet.settings.root import Environment, Settings, _known

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
SETTINGS_FILES = sorted((DEPLOY / "settings").glob("*.env"))
CARNET_SERVICES = ("carnet-api", "carnet-worker")
# Service -> the port it publishes, which must be a TLS listener.
TLS_PUBLISHED = {"carnet-proxy": 8443}
SECRETISH = re.compile(r"(KEY|PASSWORD|TOKEN|SECRET|SECRET_ID|PEPPER|PIN|DSN)$")
CARNET_NAME = re.compile(r"\bCARNET_[A-Z0-9_]*[A-Z0-9]")


def _secret_settings() -> set[str]:
    """``CARNET_*`` names of every ``SecretStr`` setting, read from the settings model itself."""

    def is_secret(annotation: object) -> bool:
        return annotation is SecretStr or SecretStr in typing.get_args(annotation)

    names = set()
    for name, field in Settings.model_fields.items():
        group = field.annotation
        if isinstance(group, type) and issubclass(group, BaseModel):
            secret = [sub for sub, f in group.model_fields.items() if is_secret(f.annotation)]
            names |= {f"CARNET_{name}__{sub}".upper() for sub in secret}
        elif is_secret(group):
            names.add(f"CARNET_{name}".upper())
    return names


def _env_file(path: Path) -> dict[str, str]:
    values = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, sep, value = line.partition("=")
            assert sep and name == name.strip() and value == value.strip(), f"{path.name}: {line!r}"
            # Read the same by compose's env_file and systemd's EnvironmentFile: no quoting to interpret.
            assert not re.search(r"[\"'`$\\]", value), f"{path.name}: {line!r}"
            values[name] = value
    return values


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    return loaded


def _environment(service: dict[str, Any]) -> dict[str, str]:
    env: dict[str, str] = {}
    for f in service.get("env_file", []):
        env.update(_env_file(DEPLOY / f))
    raw = service.get("environment", {})
    if isinstance(raw, list):
        raw = dict(item.partition("=")[::2] for item in raw)
    env.update({k: str(v) for k, v in raw.items()})
    return env


def test_every_carnet_name_in_deploy_is_a_real_setting() -> None:
    files = [p for p in DEPLOY.rglob("*") if p.is_file()]
    assert len(files) > 10
    unknown = {(p.relative_to(DEPLOY).as_posix(), name) for p in files for name in CARNET_NAME.findall(p.read_text())
               if not _known(name)}
    assert not unknown


@pytest.mark.parametrize("path", SETTINGS_FILES, ids=lambda p: p.name)
def test_example_settings_load_and_hold_no_secret(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    values = _env_file(path)
    assert values and all(_known(name) for name in values)
    assert not set(values) & _secret_settings(), "secrets come from files, never from a settings file"
    for name in [n for n in os.environ if n.startswith("CARNET_")]:
        monkeypatch.delenv(name)
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    # What the secret files would provide (placeholders, for the production checks to pass).
    settings = Settings(_env_file=None, api_key_pepper="placeholder-pepper-of-32-bytes-long")  # type: ignore[call-arg]
    if settings.environment is Environment.PRODUCTION:
        for url in (settings.qdrant.url, settings.vault.url, settings.llm.base_url):
            assert url.startswith("https://")
        assert settings.qdrant.ca_cert and settings.vault.ca_cert and settings.llm.ca_cert
        assert settings.postgres.ca_cert and settings.postgres.sslmode.value == "verify-full"
        assert settings.workers.in_process is False and settings.maintenance.scheduler is False


def _mounted_files(service: dict[str, Any]) -> set[str]:
    """Container paths of the service's bind-mounted files and secrets."""
    mounted = {v.split(":")[1] for v in service.get("volumes", []) if v.startswith("./")}
    for secret in service.get("secrets", []):
        name = secret if isinstance(secret, str) else secret.get("target", secret["source"])
        mounted.add(name if name.startswith("/") else f"/run/secrets/{name}")
    return mounted


def test_compose_api_settings_load_as_it_listens(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, compose: dict[str, Any]
) -> None:
    """The API's env file and environment, with `--host 0.0.0.0` as its command says, pass production checks,
    and it serves HTTPS itself: no clear listener, not even on the internal network. Its certificate files
    must be mounted into the container; they stand in as empty files here."""
    api = compose["services"]["carnet-api"]
    for name in [n for n in os.environ if n.startswith("CARNET_")]:
        monkeypatch.delenv(name)
    environment = _environment(api)
    assert "CARNET_TLS__TERMINATED_UPSTREAM" not in environment
    for name, value in environment.items():
        if name in ("CARNET_TLS__CERT_FILE", "CARNET_TLS__KEY_FILE"):
            assert value in _mounted_files(api), f"{name}={value} is not mounted into carnet-api"
            value = str(tmp_path / Path(value).name)
            Path(value).touch()
        monkeypatch.setenv(name, value)
    settings = Settings(_env_file=None, api_key_pepper="placeholder-pepper-of-32-bytes-long", host="0.0.0.0")  # type: ignore[call-arg]
    assert settings.environment is Environment.PRODUCTION and settings.tls.enabled


def test_the_proxy_reencrypts_and_verifies_the_api() -> None:
    conf = (DEPLOY / "compose" / "nginx" / "nginx.conf").read_text()
    directives = {line.strip().rstrip(";").split(None, 1)[0]: line.strip().rstrip(";").split(None, 1)[-1]
                  for line in conf.splitlines() if line.strip() and not line.strip().startswith("#")}
    assert directives["proxy_pass"].startswith("https://carnet-api:")
    assert directives["proxy_ssl_verify"] == "on" and directives["proxy_ssl_name"] == "carnet-api"
    assert directives["proxy_ssl_trusted_certificate"] == "/etc/nginx/tls/ca.pem"
    assert "http://" not in conf


def test_compose_images_are_pinned(compose: dict[str, Any]) -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    for name, service in compose["services"].items():
        image = service["image"]
        repo, _, tag = image.rpartition(":")
        assert repo and "/" not in tag and re.search(r"\d", tag) and "latest" not in image, f"{name}: {image}"
    assert {compose["services"][s]["image"] for s in CARNET_SERVICES} == {f"carnet:{version}"}


def test_compose_has_the_stack(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert {"carnet-api", "carnet-worker", "qdrant", "openbao", "postgres", "vllm"} <= set(services)
    assert services["carnet-api"]["command"][0] == "serve" and services["carnet-worker"]["command"] == ["worker"]
    assert _environment(services["carnet-api"])["CARNET_WORKERS__IN_PROCESS"] == "false"
    for name in CARNET_SERVICES:
        service = services[name]
        assert service["entrypoint"] == ["carnet-env-from-files", "/run/secrets", "carnet"]
        assert service["read_only"] is True and service["cap_drop"] == ["ALL"]
        assert "no-new-privileges:true" in service["security_opt"]
        assert any(v.endswith(":/etc/carnet/tls/ca.pem:ro") for v in service["volumes"])


def test_compose_secrets_come_from_files(compose: dict[str, Any]) -> None:
    for name, secret in compose["secrets"].items():
        assert set(secret) == {"file"} and secret["file"].startswith(("./secrets/", "./tls/")), name
    secret_settings = _secret_settings()
    for name, service in compose["services"].items():
        env = _environment(service)
        assert not set(env) & secret_settings, name
        for key, value in env.items():
            if SECRETISH.search(key):
                assert key.endswith("_FILE") or value.startswith("/run/secrets/"), f"{name}: {key}"
        for item in service.get("secrets", []):
            if isinstance(item, dict) and item["target"].startswith("CARNET_"):
                assert _known(item["target"]), f"{name}: {item['target']}"
    targets = {item["target"] for item in compose["services"]["carnet-api"]["secrets"] if isinstance(item, dict)}
    assert {"CARNET_API_KEY_PEPPER", "CARNET_QDRANT__API_KEY", "CARNET_POSTGRES__PASSWORD",
            "CARNET_LLM__API_KEY", "CARNET_VAULT__SECRET_ID"} <= targets


def test_only_tls_listeners_are_published(compose: dict[str, Any]) -> None:
    published = {name: s["ports"] for name, s in compose["services"].items() if s.get("ports")}
    assert set(published) == set(TLS_PUBLISHED)
    for name, ports in published.items():
        assert all(int(str(p).rsplit(":", 1)[-1]) == TLS_PUBLISHED[name] for p in ports)
    nginx = (DEPLOY / "compose" / "nginx" / "nginx.conf").read_text()
    listens = re.findall(r"^\s*listen\s+([^;]+);", nginx, flags=re.M)
    assert listens == ["8443 ssl"]
    assert re.search(r"^\s*access_log off;", nginx, flags=re.M), "request paths carry subject ids"
    assert compose["networks"]["backend"]["internal"] is True


def test_backends_run_with_tls_and_keys_from_files(compose: dict[str, Any]) -> None:
    services = compose["services"]
    qdrant = services["qdrant"]
    assert qdrant["environment"]["QDRANT__SERVICE__ENABLE_TLS"] == "true"
    assert "cat /run/secrets/qdrant_api_key" in qdrant["entrypoint"][-1]
    assert "-dev" not in " ".join(services["openbao"]["command"])
    hcl = (DEPLOY / "compose" / "openbao" / "openbao.hcl").read_text()
    assert "tls_cert_file" in hcl and "tls_disable" not in hcl
    pg = " ".join(services["postgres"]["command"])
    assert "ssl=on" in pg and "password_encryption=scram-sha-256" in pg
    hba = [line.split() for line in (DEPLOY / "compose" / "postgres" / "pg_hba.conf").read_text().splitlines()
           if line.strip() and not line.startswith("#")]
    for row in hba:
        assert row[-1] in {"peer", "scram-sha-256", "reject"}, row
        assert row[0] in {"local", "hostssl"} or row[-1] == "reject", row


def test_vllm_serves_the_design_defaults(compose: dict[str, Any]) -> None:
    vllm = compose["services"]["vllm"]
    args = vllm["command"]
    flags = {a.split("=", 1)[0] for a in args if a.startswith("--")}
    assert {"--enable-prefix-caching", "--structured-outputs-config.backend", "--max-model-len",
            "--tensor-parallel-size", "--served-model-name", "--ssl-certfile", "--ssl-keyfile"} <= flags
    assert "--api-key" not in flags, "ps shows the command line: the key comes from VLLM_API_KEY"
    assert "cat /run/secrets/vllm_api_key" in vllm["entrypoint"][2]
    served = next(a.split("=", 1)[1] for a in args if a.startswith("--served-model-name="))
    assert served == _env_file(DEPLOY / "settings" / "single-host.env")["CARNET_LLM__MODEL"]
    assert args[0].startswith("/models/") and any(v.endswith(":/models:ro") for v in vllm["volumes"])
    assert vllm["environment"]["HF_HUB_OFFLINE"] == "1"
    (device,) = vllm["deploy"]["resources"]["reservations"]["devices"]
    assert device["driver"] == "nvidia" and device["capabilities"] == ["gpu"]


def _dockerfile() -> list[tuple[str, str]]:
    text = re.sub(r"\\\n", " ", (DEPLOY / "Dockerfile").read_text())
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines]


def test_dockerfile_is_multi_stage_pinned_and_non_root() -> None:
    instructions = _dockerfile()
    args = dict(v.split("=", 1) for k, v in instructions if k == "ARG" and "=" in v)
    froms = [v for k, v in instructions if k == "FROM"]
    assert len(froms) >= 2
    stages: set[str] = set()
    for spec in froms:
        image = re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], spec.split()[0])
        # Every base is the pinned Python image, or a stage defined above (the builder picks one by SOURCE).
        assert image in stages or re.fullmatch(r"python:3\.11\.\d+-slim-bookworm(@sha256:[0-9a-f]{64})?", image), spec
        if " AS " in spec.upper():
            stages.add(spec.split()[-1])
    final = instructions[max(i for i, (k, _) in enumerate(instructions) if k == "FROM"):]
    user = [v for k, v in final if k == "USER"][-1]
    uid = re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], user).split(":")[0]
    assert uid not in {"root", "0"} and int(uid) >= 1000
    final_text = " ".join(v for _, v in final)
    assert not re.search(r"apt-get install|build-essential|gcc|pip install", final_text)
    healthcheck = [v for k, v in final if k == "HEALTHCHECK"]
    assert healthcheck and "/healthz" in healthcheck[0] and "curl" not in healthcheck[0]
    assert ("ENTRYPOINT", '["carnet"]') in final and ("CMD", '["serve", "--host", "0.0.0.0"]') in final
    assert "latest" not in (DEPLOY / "Dockerfile").read_text()


def test_dockerfile_installs_the_pinned_torch_first() -> None:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (torch,) = [d for d in deps if d.startswith("torch")]
    runs = [v for k, v in _dockerfile() if k == "RUN"]
    first_torch = next(i for i, r in enumerate(runs) if f"'{torch}'" in r)
    first_wheel = next(i for i, r in enumerate(runs) if "pip wheel" in r)
    assert first_torch < first_wheel


def test_dockerfile_builds_from_a_checkout_or_the_bundle_offline() -> None:
    """SOURCE picks a builder stage; the wheelhouse one asks no index and needs only what the bundle carries."""
    instructions = _dockerfile()
    stages = {v.split()[-1] for k, v in instructions if k == "FROM" and " AS " in v.upper()}
    assert {"from-checkout", "from-wheelhouse"} <= stages
    assert "FROM from-${SOURCE} AS builder" in [f"{k} {v}" for k, v in instructions]
    start = next(i for i, (k, v) in enumerate(instructions) if k == "FROM" and v.endswith("from-wheelhouse"))
    end = next(i for i, (k, _) in enumerate(instructions) if i > start and k == "FROM")
    runs = " ".join(v for k, v in instructions[start:end] if k == "RUN")
    assert "--no-index" in runs and "--upgrade" not in runs and "source=wheelhouse" in runs
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text().splitlines()
    assert "!wheelhouse" in ignore and "!deploy/bin/carnet-env-from-files" in ignore


def _compose_files(compose: dict[str, Any]) -> set[str]:
    """Every host path compose.yaml reads, relative to deploy/ (bind mounts, env files, secrets)."""
    paths = set()
    for service in compose["services"].values():
        paths |= set(service.get("env_file", []))
        for volume in service.get("volumes", []):
            source = volume.split(":", 1)[0]
            if source.startswith(("./", "../", "/", "$")):
                paths.add(source)
    paths |= {secret["file"] for secret in compose["secrets"].values()}
    return paths


def test_compose_reads_only_shipped_files_or_the_sites_own(compose: dict[str, Any]) -> None:
    """A file compose.yaml mounts is either in deploy/ (and so in the air-gapped bundle, which copies those
    parts of deploy/), or one the site provides: its certificates (./tls), secrets (./secrets) and model."""
    from tests.support.bundle_script import bundle_script

    bundle = bundle_script()
    site_provided = ("./tls/", "./secrets/", "${MODELS_DIR")
    for path in sorted(_compose_files(compose)):
        if path.startswith(site_provided):
            continue
        assert path.startswith("./") and (DEPLOY / path).is_file(), path
        assert Path(path).parts[0] in bundle.DEPLOY_PARTS, f"{path} is not copied into the bundle"
    build = compose["services"]["carnet-api"]["build"]
    assert (DEPLOY / build["context"] / build["dockerfile"]).resolve() == DEPLOY / "Dockerfile"
    assert "Dockerfile" in bundle.DEPLOY_PARTS and "compose.yaml" in bundle.DEPLOY_PARTS
    assert build["args"]["SOURCE"] == "${BUILD_SOURCE:-checkout}"


def test_openbao_declares_its_audit_device_on_a_volume(compose: dict[str, Any]) -> None:
    """OpenBao 2.x refuses to enable an audit device through its API: compose's server declares one, on a
    volume of its own."""
    hcl = (DEPLOY / "compose" / "openbao" / "openbao.hcl").read_text()
    (path,) = re.findall(r'audit "file" "[^"]+" \{\s*options \{\s*file_path = "([^"]+)"', hcl)
    mounts = {v.split(":")[1]: v.split(":")[0] for v in compose["services"]["openbao"]["volumes"]}
    directory = str(Path(path).parent)
    assert directory in mounts and mounts[directory] in compose["volumes"]


def test_compose_trusts_only_the_proxy_and_the_proxy_overwrites_the_client_header(compose: dict[str, Any]) -> None:
    """Keyless requests are budgeted per client: carnet-api reads X-Forwarded-For from carnet-proxy's
    fixed address only, and nginx sends its peer there instead of passing on what a client wrote."""
    proxy = compose["services"]["carnet-proxy"]["networks"]["backend"]["ipv4_address"]
    trusted = json.loads(_environment(compose["services"]["carnet-api"])["CARNET_API__TRUSTED_PROXIES"])
    assert trusted == [proxy]
    subnet = compose["networks"]["backend"]["ipam"]["config"][0]["subnet"]
    assert ipaddress.ip_address(proxy) in ipaddress.ip_network(subnet)
    conf = (DEPLOY / "compose" / "nginx" / "nginx.conf").read_text()
    headers = [line.split()[1:] for line in conf.splitlines() if line.strip().startswith("proxy_set_header")]
    assert ["X-Forwarded-For", "$remote_addr;"] in headers
