"""The Ansible collection (ansible/): its playbook parses, ansible-lint's production profile is clean,
and what it deploys is what the rest of the repository defines (policies, units; the wrapper scripts and
the hardening block are checked against deploy/ by test_deploy_sources.py).

ansible-playbook and ansible-lint run from this interpreter's bin directory, offline, with the
collection found in ansible/ only and every cache in a temporary directory.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import jinja2
import pytest
import yaml

from carnet.adapters.vault.auth import key_store_policy, transit_policy
from tests.support.molecule import ANSIBLE, COLLECTION, ROOT, ansible_environment, tool

ROLES = COLLECTION / "roles"


def _run(name: str, *args: str, tmp_path: Path) -> None:
    exe = tool(name)
    env = {
        **ansible_environment(tmp_path),
        "ANSIBLE_CONFIG": str(ANSIBLE / "ansible.cfg"),
        "ANSIBLE_LINT_SKIP_SCHEMA_UPDATE": "1",
    }
    proc = subprocess.run([str(exe), *args], cwd=ANSIBLE, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"{name} {' '.join(args)} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"


def test_site_playbook_syntax(tmp_path: Path) -> None:
    _run("ansible-playbook", "--syntax-check", "-i", "inventory/example.yml", "playbooks/site.yml", tmp_path=tmp_path)


@pytest.mark.slow
def test_ansible_lint_production_profile(tmp_path: Path) -> None:
    _run("ansible-lint", "--offline", "--profile", "production", tmp_path=tmp_path)
    shutil.rmtree(ANSIBLE / ".ansible", ignore_errors=True)  # ansible-lint's scratch copy, if any


def test_openbao_policies_are_carnets_own() -> None:
    files = ROLES / "openbao" / "files"
    assert (files / "carnet-runtime.hcl").read_text() == transit_policy() + key_store_policy()
    assert (files / "carnet-admin.hcl").read_text() == transit_policy(admin=True)


def _render(template: Path, **values: object) -> str:
    env = jinja2.Environment(trim_blocks=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined)
    return env.from_string(template.read_text()).render(**values)


_SECRETS = [
    ("CARNET_API_KEY_PEPPER", "api-key-pepper"),
    ("CARNET_QDRANT__API_KEY", "qdrant-api-key"),
    ("CARNET_POSTGRES__PASSWORD", "postgres-password"),
    ("CARNET_VAULT__ROLE_ID", "openbao-role-id"),
    ("CARNET_VAULT__SECRET_ID", "openbao-secret-id"),
    ("CARNET_LLM__API_KEY", "vllm-api-key"),
]


@pytest.mark.parametrize("unit", sorted(p.name for p in (ROOT / "deploy" / "systemd").glob("carnet-*")))
def test_carnet_units_render_to_the_deploy_units(unit: str) -> None:
    """With every secret set and the role's defaults, its unit is deploy/systemd's, line for line."""
    defaults = yaml.safe_load((ROLES / "carnet" / "defaults" / "main.yml").read_text())
    state = defaults["carnet_state_dir"]
    rendered = _render(
        ROLES / "carnet" / "templates" / f"{unit}.j2",
        ansible_managed="managed",
        _carnet_credentials=[{"name": n, "file": f, "value": "x"} for n, f in _SECRETS],
        _carnet_credentials_dir=f"{defaults['carnet_config_dir']}/credentials",
        _carnet_backup_credentials=["qdrant-api-key", "postgres-password"],
        _carnet_venv=defaults["carnet_venv_dir"],
        _carnet_home=state,
        _carnet_etc=defaults["carnet_config_dir"],
        _carnet_state_dirs=[f"{state}/data", f"{state}/keys", f"{state}/backups"],
        carnet_user=defaults["carnet_user"],
        carnet_group=defaults["carnet_group"],
        carnet_backup_keep=defaults["carnet_backup_keep"],
        carnet_maintain_on_calendar=defaults["carnet_maintain_on_calendar"],
        carnet_backup_on_calendar=defaults["carnet_backup_on_calendar"],
    )
    assert rendered.splitlines()[0] == "# managed"
    assert rendered.split("\n", 1)[1] == (ROOT / "deploy" / "systemd" / unit).read_text()


def test_unused_backend_drops_its_credential() -> None:
    creds = [{"name": n, "file": f, "value": "" if f == "vllm-api-key" else "x"} for n, f in _SECRETS]
    rendered = _render(
        ROLES / "carnet" / "templates" / "carnet-api.service.j2",
        ansible_managed="m",
        _carnet_credentials=creds,
        _carnet_credentials_dir="/etc/carnet/credentials",
        _carnet_venv="/opt/carnet",
        _carnet_home="/var/lib/carnet",
        _carnet_etc="/etc/carnet",
        _carnet_state_dirs=["/var/lib/carnet/data"],
        carnet_user="carnet",
        carnet_group="carnet",
    )
    assert "LoadCredential=CARNET_API_KEY_PEPPER:" in rendered
    assert "CARNET_LLM__API_KEY" not in rendered


@pytest.mark.parametrize("role", ["carnet", "qdrant", "openbao", "vllm", "postgresql_wiring"])
def test_role_layout(role: str) -> None:
    for part in (
        "tasks/main.yml",
        "tasks/asserts.yml",
        "defaults/main.yml",
        "handlers/main.yml",
        "meta/main.yml",
        "meta/argument_specs.yml",
    ):
        assert (ROLES / role / part).is_file(), f"{role}/{part}"


def test_the_example_inventory_speaks_tls_everywhere() -> None:
    """Nothing in the production example listens or connects in clear: the API hosts get their own
    certificate (which the role turns into CARNET_TLS__*), every URL is https, no TLS-proxy statement."""
    import yaml

    text = (ANSIBLE / "inventory" / "example.yml").read_text()
    assert "http://" not in text and "TERMINATED_UPSTREAM" not in text
    groups = yaml.safe_load(text)["all"]["children"]["carnet"]["children"]
    api = groups["carnet_api"]["vars"]
    assert api["carnet_api_enabled"] is True and api["carnet_tls_cert_src"] and api["carnet_tls_key_src"]
    tls_vars = (ROLES / "carnet" / "vars" / "main.yml").read_text()
    assert "'CARNET_TLS__CERT_FILE': _carnet_tls_dir ~ '/carnet.pem'" in tls_vars


def _tasks(path: Path) -> list[dict[str, object]]:
    """The tasks of a role's task file, blocks (and their rescue and always parts) flattened."""
    import yaml

    def flat(items: list[dict[str, object]]) -> list[dict[str, object]]:
        out: list[dict[str, object]] = []
        for task in items:
            out.append(task)
            for part in ("block", "rescue", "always"):
                out += flat(task.get(part, []))  # type: ignore[arg-type]
        return out

    return flat(yaml.safe_load(path.read_text()) or [])


def test_the_wheelhouse_travels_as_one_archive_not_file_by_file() -> None:
    """``copy`` of a directory costs a module call per wheel (~110: minutes per converge); the role packs
    the wheelhouse on the controller and unpacks it on the host in one ``unarchive``."""
    tasks = [t for f in sorted((ROLES / "carnet" / "tasks").glob("*.yml")) for t in _tasks(f)]
    copies = [t for t in tasks if "carnet_wheelhouse_src" in str(t.get("ansible.builtin.copy", ""))]
    assert not copies, copies
    (unpack,) = [t for t in tasks if "ansible.builtin.unarchive" in t]
    args = unpack["ansible.builtin.unarchive"]
    assert isinstance(args, dict) and args["dest"] == "{{ _carnet_wheelhouse_dest }}"
    assert args.get("remote_src", False) is False  # the archive is the controller's, sent once
    (pack,) = [t for t in tasks if "carnet_wheelhouse_src" in str(t.get("ansible.builtin.command", ""))]
    assert pack["delegate_to"] == "localhost" and pack["become"] is False


# -- the qdrant role in cluster mode ---------------------------------------------------------------

_QDRANT = ROLES / "qdrant"


def _qdrant_render(template: str, host: str, **overrides: object) -> str:
    """A qdrant template rendered as Ansible would for ``host`` of the example inventory: the role's
    defaults and vars, then the inventory's group vars (the bootstrap expression included)."""
    env = jinja2.Environment(trim_blocks=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined)
    env.filters["bool"] = lambda v: v if isinstance(v, bool) else str(v).lower() in ("true", "yes", "1")
    env.filters["to_json"] = json.dumps
    inventory = yaml.safe_load((ANSIBLE / "inventory" / "example.yml").read_text())["all"]
    group = inventory["children"]["qdrant"]
    values: dict[str, object] = {"ansible_managed": "managed", "inventory_hostname": host,
                                 "groups": {"qdrant": list(group["hosts"])}, "site_tls_dir": "/srv/site/tls",
                                 "vault_qdrant_archive_sha256": "0" * 64, "vault_qdrant_api_key": "k" * 32,
                                 "vault_qdrant_read_only_api_key": "r" * 32}
    layers = [yaml.safe_load((_QDRANT / "defaults" / "main.yml").read_text()),
              yaml.safe_load((_QDRANT / "vars" / "main.yml").read_text()), group["vars"], overrides]
    for layer in layers:
        values.update(layer)
    for _ in range(3):  # variables referring to variables, as Ansible resolves them lazily
        values = {k: env.from_string(v).render(**values) if isinstance(v, str) else v for k, v in values.items()}
    return env.from_string((_QDRANT / "templates" / template).read_text()).render(**values)


def _exec_start(unit: str) -> list[str]:
    return next(line for line in unit.splitlines() if line.startswith("ExecStart=")).split()


def test_the_first_qdrant_node_starts_the_cluster_the_others_join_it() -> None:
    for host in ("qdrant-1.internal", "qdrant-2.internal", "qdrant-3.internal"):
        config = yaml.safe_load(_qdrant_render("config.yaml.j2", host))
        assert config["cluster"] == {"enabled": True, "p2p": {"port": 6335, "enable_tls": True}}
        assert config["tls"]["ca_cert"] == "/etc/qdrant/tls/ca.pem"  # peers verify each other against it
        assert config["service"]["enable_tls"] is True
    first = _exec_start(_qdrant_render("qdrant.service.j2", "qdrant-1.internal"))
    assert first[1:] == ["--config-path", "/etc/qdrant/config.yaml", "--uri", "https://qdrant-1.internal:6335"]
    second = _exec_start(_qdrant_render("qdrant.service.j2", "qdrant-2.internal"))
    assert second[1:] == ["--config-path", "/etc/qdrant/config.yaml", "--uri", "https://qdrant-2.internal:6335",
                          "--bootstrap", "https://qdrant-1.internal:6335"]


def test_a_single_qdrant_node_has_no_cluster_section() -> None:
    config = yaml.safe_load(_qdrant_render("config.yaml.j2", "qdrant-1.internal", qdrant_cluster_enabled=False))
    assert "cluster" not in config
    unit = _exec_start(_qdrant_render("qdrant.service.j2", "qdrant-1.internal", qdrant_cluster_enabled=False))
    assert unit[1:] == ["--config-path", "/etc/qdrant/config.yaml"]
    defaults = yaml.safe_load((_QDRANT / "defaults" / "main.yml").read_text())
    assert defaults["qdrant_cluster_enabled"] is False and defaults["qdrant_bootstrap_uri"] == ""


def test_the_qdrant_cluster_options_are_declared_and_checked() -> None:
    options = yaml.safe_load((_QDRANT / "meta" / "argument_specs.yml").read_text())["argument_specs"]["main"]["options"]
    defaults = yaml.safe_load((_QDRANT / "defaults" / "main.yml").read_text())
    assert set(options) == set(defaults) | {"qdrant_archive_sha256", "qdrant_tls_cert_src", "qdrant_tls_key_src",
                                            "qdrant_api_key"}
    for name in ("qdrant_cluster_enabled", "qdrant_p2p_port", "qdrant_p2p_tls", "qdrant_bootstrap_uri"):
        assert options[name]["default"] == defaults[name], name
    asserts = (_QDRANT / "tasks" / "asserts.yml").read_text()
    assert "qdrant_tls_ca_src | length > 0" in asserts and "when: qdrant_cluster_enabled | bool" in asserts


def test_the_example_sets_carnet_up_for_the_three_node_cluster() -> None:
    inventory = yaml.safe_load((ANSIBLE / "inventory" / "example.yml").read_text())["all"]["children"]
    settings = inventory["carnet"]["vars"]["carnet_settings_extra"]
    assert len(inventory["qdrant"]["hosts"]) == 3
    assert {k: settings[k] for k in settings if k.startswith("CARNET_QDRANT__") and k != "CARNET_QDRANT__URL"} == {
        "CARNET_QDRANT__SHARD_NUMBER": "6", "CARNET_QDRANT__REPLICATION_FACTOR": "2",
        "CARNET_QDRANT__WRITE_CONSISTENCY_FACTOR": "2", "CARNET_QDRANT__WRITE_ORDERING": "medium",
        "CARNET_QDRANT__READ_CONSISTENCY": "1"}
    play = next(p for p in yaml.safe_load((ANSIBLE / "playbooks" / "site.yml").read_text()) if p["hosts"] == "qdrant")
    assert play["serial"] == 1


def test_the_embedding_key_reaches_carnet_as_a_file_and_only_when_set() -> None:
    """With carnet_embed_api_key, each Carnet unit loads it as a credential that is not a CARNET_* name
    (carnet-env-from-files never exports it) and points CARNET_EMBED_SERVER__API_KEY_FILE at it."""
    base: dict[str, object] = {
        "ansible_managed": "m", "_carnet_credentials": [{"name": n, "file": f, "value": "x"} for n, f in _SECRETS],
        "_carnet_credentials_dir": "/etc/carnet/credentials", "_carnet_venv": "/opt/carnet",
        "_carnet_home": "/var/lib/carnet", "_carnet_etc": "/etc/carnet", "_carnet_state_dirs": ["/var/lib/carnet/data"],
        "carnet_user": "carnet", "carnet_group": "carnet",
    }
    for unit in ("carnet-api.service.j2", "carnet-worker@.service.j2", "carnet-maintain.service.j2"):
        template = ROLES / "carnet" / "templates" / unit
        with_key = _render(template, **base, carnet_embed_api_key="k" * 40)
        assert "LoadCredential=embed-api-key:/etc/carnet/credentials/embed-api-key" in with_key, unit
        assert "Environment=CARNET_EMBED_SERVER__API_KEY_FILE=%d/embed-api-key" in with_key, unit
        assert "embed-api-key" not in _render(template, **base, carnet_embed_api_key=""), unit


def test_the_example_serves_the_embedding_model_on_the_gpu_host_and_wires_carnet_to_it() -> None:
    inventory = yaml.safe_load((ANSIBLE / "inventory" / "example.yml").read_text())["all"]["children"]
    gpu = inventory["vllm_gpu"]["vars"]
    settings = inventory["carnet"]["vars"]["carnet_settings_extra"]
    defaults = yaml.safe_load((ROLES / "vllm" / "defaults" / "main.yml").read_text())
    assert defaults["vllm_embed_enabled"] is False  # off by default, on in the example
    assert gpu["vllm_embed_enabled"] is True and gpu["vllm_embed_model_path"].startswith("/")
    assert gpu["vllm_gpu_memory_utilization"] + gpu["vllm_embed_gpu_memory_utilization"] <= 0.95
    assert settings["CARNET_EMBEDDER"] == "remote"
    assert settings["CARNET_EMBED_SERVER__BASE_URL"] == f"https://gpu-1.internal:{defaults['vllm_embed_port']}"
    assert settings["CARNET_EMBED_SERVER__MODEL"] == gpu["vllm_embed_served_model_name"]
    assert inventory["carnet"]["vars"]["carnet_embed_api_key"] == gpu["vllm_embed_api_key"]
    unit = _render(ROLES / "vllm" / "templates" / "vllm-embed.service.j2", ansible_managed="m",
                   **(defaults | {k: v for k, v in gpu.items() if k.startswith("vllm_embed") or k == "vllm_version"}))
    flags = _exec_start(unit.replace("\\\n", " "))  # the continuation lines joined
    assert "--runner=pooling" in flags and f"--port={defaults['vllm_embed_port']}" in flags
    assert f"--served-model-name={gpu['vllm_embed_served_model_name']}" in flags and "--max-model-len=512" in flags
    assert "LoadCredential=vllm-api-key:/etc/vllm/credentials/vllm-embed-api-key" in unit
    assert "--api-key" not in unit and f"ReadOnlyPaths={gpu['vllm_embed_model_path']}" in unit
