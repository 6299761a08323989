"""The Helm chart (helm/carnet): it lints, renders valid manifests, and what it renders is what the
issue asks of a sovereign deployment.

`helm lint --strict` and `helm template` run with each values file of helm/carnet/ci (minimal,
production, with vLLM, embedded engine), with the pinned `helm` beside this interpreter
(scripts/install-helm.sh). Every rendered manifest is validated strictly for the Kubernetes version
the chart's `kubeVersion` starts at: built-in kinds by kubernetes-validate, the two custom resources
(ServiceMonitor, SecretProviderClass) against tests/support/kubernetes_schemas/; no kind is skipped.
Then, on what is rendered (never on the templates' text): the restricted security context of every pod,
the NetworkPolicy (DNS plus the configured Qdrant, KMS, vLLM and PostgreSQL peers only), no Secret and
no secret in any ConfigMap, secretKeyRefs only to the configured existing Secrets, the settings
ConfigMap accepted by Carnet's own Settings, TLS on every link, the embedded engine's single replica.
Overrides that weaken the chart (a writable root file system, an empty egress peer list...) are
rendered too, to show each check can fail.
"""

from __future__ import annotations

import json
import os
import re
import typing
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml
from pydantic import BaseModel, SecretStr

from carnet.settings.root import Environment, Settings, _known
from tests.support.helm_chart import (
    CHART,
    CUSTOM_KINDS,
    ROOT,
    Manifest,
    helm,
    kube_version,
    one,
    pod_specs,
    pod_templates,
    render,
    template_result,
    validate,
    values,
)

CI_FILES = sorted(p.name for p in (CHART / "ci").glob("*-values.yaml"))
PRODUCTION = ("production-values.yaml",)
EMBEDDED = ("embedded-values.yaml",)
VLLM = ("vllm-values.yaml",)
TLS_DIR = "/etc/carnet/tls/"
SECRETISH = re.compile(r"(API_KEY|PASSWORD|TOKEN|SECRET|SECRET_ID|ROLE_ID|PEPPER|PIN|DSN)$", re.I)
CARNET_COMPONENTS = {"api", "worker", "maintenance", "backup", "migrate"}


def _secret_settings() -> set[str]:
    """``CARNET_*`` names of every ``SecretStr`` setting, read from the settings model itself."""

    def is_secret(annotation: object) -> bool:
        return annotation is SecretStr or SecretStr in typing.get_args(annotation)

    names = set()
    for name, field in Settings.model_fields.items():
        group = field.annotation
        if isinstance(group, type) and issubclass(group, BaseModel):
            names |= {
                f"CARNET_{name}__{sub}".upper() for sub, f in group.model_fields.items() if is_secret(f.annotation)
            }
        elif is_secret(group):
            names.add(f"CARNET_{name}".upper())
    return names


def _containers(spec: Manifest) -> list[Manifest]:
    return [*spec.get("initContainers", []), *spec["containers"]]


def _component(meta: Manifest) -> str:
    return str(meta["labels"].get("app.kubernetes.io/component", ""))


def _carnet_pods(manifests: tuple[Manifest, ...]) -> list[tuple[str, Manifest, Manifest]]:
    """(name, pod metadata, pod spec) of the pods that run Carnet's code (not vLLM, not the test pod)."""
    metas = dict(pod_templates(manifests))
    return [
        (name, metas[name], spec) for name, spec in pod_specs(manifests) if _component(metas[name]) in CARNET_COMPONENTS
    ]


# --- lint and schema validation -------------------------------------------------------------------


@pytest.mark.parametrize("values_file", CI_FILES)
def test_helm_lint_strict(values_file: str) -> None:
    proc = helm(
        "lint", "--strict", str(CHART), "--values", str(CHART / "ci" / values_file), "--kube-version", kube_version()
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_ci_values_files_are_the_issues() -> None:
    issues = {"minimal-values.yaml", "production-values.yaml", "vllm-values.yaml", "vllm-embed-values.yaml"}
    assert issues <= set(CI_FILES)


@pytest.mark.parametrize("values_file", CI_FILES)
def test_every_rendered_manifest_validates_strictly(values_file: str) -> None:
    manifests = render((values_file,))
    for m in manifests:
        try:
            validate(m)
        except (kubernetes_validate.ValidationError, jsonschema.ValidationError) as exc:
            pytest.fail(
                f"{values_file}: {m['kind']}/{m['metadata']['name']}: {'.'.join(map(str, exc.path))}: {exc.message}"
            )
        except kubernetes_validate.SchemaNotFoundError as exc:
            pytest.fail(f"{values_file}: {exc.message}: ship its CRD's schema in tests/support/kubernetes_schemas/")


def test_all_custom_resources_are_rendered_and_validated_somewhere() -> None:
    rendered = {(m["apiVersion"], m["kind"]) for f in CI_FILES for m in render((f,))}
    assert set(CUSTOM_KINDS) <= rendered, "a shipped CRD schema no values file exercises"


def test_strict_validation_refuses_an_unknown_field() -> None:
    """Strict means something: a misspelt field fails, for a built-in kind and for each custom one."""
    manifests = render(PRODUCTION) + render(EMBEDDED)
    deployment = json.loads(json.dumps(one(render(PRODUCTION), "Deployment", "carnet-api")))
    deployment["spec"]["template"]["spec"]["containers"][0]["securityContex"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        validate(deployment)
    for _, kind in CUSTOM_KINDS:
        custom = json.loads(json.dumps(next(m for m in manifests if m["kind"] == kind)))
        custom["spec"]["unknownField"] = True
        with pytest.raises(jsonschema.ValidationError):
            validate(custom)


def test_values_schema_is_closed_and_refuses_unknown_values() -> None:
    schema = json.loads((CHART / "values.schema.json").read_text())

    def open_objects(node: Any, path: str) -> list[str]:
        found = []
        if isinstance(node, dict):
            if node.get("type") == "object" and "properties" in node and node.get("additionalProperties") is not False:
                found.append(path or "/")
            for key, value in node.items():
                found += open_objects(value, f"{path}/{key}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                found += open_objects(value, f"{path}/{index}")
        return found

    assert open_objects(schema, "") == []
    for bad in (
        "carnet.vectorBackend=qdrant",
        "secrets.provider=env",
        "carnet.typo=1",
        "tls.server.minVersion=TLSv1.1",
    ):
        proc = template_result(sets=(bad,))
        assert proc.returncode != 0, f"--set {bad} was accepted"


def test_every_value_is_documented_in_values_yaml_and_the_readme() -> None:
    text = (CHART / "values.yaml").read_text()
    documented = set(re.findall(r"^\s*## @param ([\w.]+) ", text, flags=re.M))

    def leaves(node: Any, prefix: str) -> set[str]:
        if isinstance(node, dict) and node and not prefix.endswith((".secrets", ".objects", "Selector")):
            return {leaf for key, value in node.items() for leaf in leaves(value, f"{prefix}.{key}" if prefix else key)}
        return {prefix}

    undocumented = {
        leaf
        for leaf in leaves(yaml.safe_load(text), "")
        if not any(leaf == d or leaf.startswith(d + ".") for d in documented)
    }
    assert undocumented == set()
    readme = (CHART / "README.md").read_text()
    assert {d for d in documented if f"`{d}`" not in readme} == set()


# --- pods: restricted security context ------------------------------------------------------------


def _security_problems(manifests: tuple[Manifest, ...]) -> list[str]:
    """What breaks the restricted Pod Security Standard, per pod and container (empty: nothing)."""
    problems = []
    for name, spec in pod_specs(manifests):
        pod = spec.get("securityContext", {})
        for c in _containers(spec):
            ctx = c.get("securityContext", {})
            where = f"{name}/{c['name']}"
            if not ctx.get("runAsNonRoot", pod.get("runAsNonRoot")):
                problems.append(f"{where}: runAsNonRoot")
            if ctx.get("runAsUser", pod.get("runAsUser")) == 0:
                problems.append(f"{where}: runAsUser 0")
            if ctx.get("readOnlyRootFilesystem") is not True:
                problems.append(f"{where}: readOnlyRootFilesystem")
            if ctx.get("allowPrivilegeEscalation") is not False or ctx.get("privileged"):
                problems.append(f"{where}: allowPrivilegeEscalation")
            if "ALL" not in ctx.get("capabilities", {}).get("drop", []) or ctx.get("capabilities", {}).get("add"):
                problems.append(f"{where}: capabilities drop ALL")
            if ctx.get("seccompProfile", pod.get("seccompProfile", {})).get("type") != "RuntimeDefault":
                problems.append(f"{where}: seccompProfile RuntimeDefault")
    return problems


@pytest.mark.parametrize("values_file", CI_FILES)
def test_every_pod_runs_restricted(values_file: str) -> None:
    manifests = render((values_file,))
    kinds = {name.split("/")[0] for name, _ in pod_specs(manifests)}
    assert {"Deployment", "Pod"} <= kinds
    assert _security_problems(manifests) == []


def test_pod_kinds_covered_include_cronjobs_and_the_migration_job() -> None:
    names = {name for name, _ in pod_specs(render(PRODUCTION))}
    assert {
        "Deployment/carnet-api",
        "Deployment/carnet-worker",
        "CronJob/carnet-maintenance",
        "CronJob/carnet-backup",
        "Job/carnet-migrate",
        "Pod/carnet-test-readyz",
    } <= names
    assert "Deployment/carnet-vllm" in {name for name, _ in pod_specs(render(VLLM))}


@pytest.mark.parametrize(
    ("override", "problem"),
    [
        ("containerSecurityContext.readOnlyRootFilesystem=false", "readOnlyRootFilesystem"),
        ("containerSecurityContext.allowPrivilegeEscalation=true", "allowPrivilegeEscalation"),
        ("containerSecurityContext.capabilities.drop={NET_RAW}", "capabilities drop ALL"),
        ("containerSecurityContext.seccompProfile.type=Unconfined", "seccompProfile RuntimeDefault"),
        ("podSecurityContext.runAsUser=0", "runAsUser 0"),
    ],
)
def test_a_weakened_security_context_is_caught(override: str, problem: str) -> None:
    problems = _security_problems(render(VLLM, (override,)))
    assert any(p.endswith(": " + problem) for p in problems), problems
    assert any(p.startswith("Deployment/carnet-vllm/") for p in problems), "vLLM shares the context"


def test_non_root_is_caught_when_neither_pod_nor_container_says_it() -> None:
    sets = ("podSecurityContext.runAsNonRoot=false", "containerSecurityContext.runAsNonRoot=false")
    assert any(p.endswith(": runAsNonRoot") for p in _security_problems(render((), sets)))


# --- NetworkPolicy ---------------------------------------------------------------------------------


def _selects(selector: Manifest, labels: dict[str, str]) -> bool:
    if any(labels.get(k) != v for k, v in selector.get("matchLabels", {}).items()):
        return False
    for expr in selector.get("matchExpressions", []):
        present, value = expr["key"] in labels, labels.get(expr["key"])
        ok = {
            "In": present and value in expr.get("values", []),
            "NotIn": value not in expr.get("values", []),
            "Exists": present,
            "DoesNotExist": not present,
        }[expr["operator"]]
        if not ok:
            return False
    return True


def _carnet_policy(manifests: tuple[Manifest, ...]) -> Manifest:
    """The NetworkPolicy that selects the API pods (there must be exactly one)."""
    api_labels = one(manifests, "Deployment", "carnet-api")["spec"]["template"]["metadata"]["labels"]
    policies = [m for m in manifests if m["kind"] == "NetworkPolicy" and _selects(m["spec"]["podSelector"], api_labels)]
    assert len(policies) == 1, f"{len(policies)} NetworkPolicies select the API pods"
    return policies[0]


def _expected_egress(values_files: tuple[str, ...], manifests: tuple[Manifest, ...]) -> list[Manifest]:
    """DNS, then each link in use with the peers and ports its values name (vLLM, the embedding server:
    this release's pods when it runs them)."""
    v = values(values_files)
    settings = one(manifests, "ConfigMap", "carnet-settings")["data"]
    rules = [{"to": v["networkPolicy"]["dns"]["to"], "ports": v["networkPolicy"]["dns"]["ports"]}]
    used = {
        "qdrant": settings["CARNET_VECTOR_BACKEND"] == "server",
        "vault": "CARNET_VAULT__URL" in settings or v["secrets"]["provider"] == "vaultAgent",
        "postgres": settings["CARNET_CATALOG"] == "postgres",
        "llm": settings["CARNET_EXTRACTOR"] == "mistral",
        "embedServer": settings["CARNET_EMBEDDER"] == "remote",
    }
    in_release = {"llm": ("vllm", "carnet-vllm"), "embedServer": ("vllmEmbed", "carnet-vllm-embed")}
    for link in ("qdrant", "vault", "postgres", "llm", "embedServer"):
        if not used[link]:
            continue
        if link in in_release and v[in_release[link][0]]["enabled"]:
            labels = one(manifests, "Deployment", in_release[link][1])["spec"]["selector"]["matchLabels"]
            rules.append(
                {"to": [{"podSelector": {"matchLabels": labels}}], "ports": [{"port": 8443, "protocol": "TCP"}]}
            )
        else:
            rules.append({"to": v[link]["egress"]["to"], "ports": v[link]["egress"]["ports"]})
    return rules


@pytest.mark.parametrize("values_file", CI_FILES)
def test_network_policy_allows_dns_and_the_configured_links_only(values_file: str) -> None:
    manifests = render((values_file,))
    policy = _carnet_policy(manifests)
    assert set(policy["spec"]["policyTypes"]) == {"Ingress", "Egress"}
    egress = policy["spec"]["egress"]
    for rule in egress:
        assert rule.get("to") and all(peer for peer in rule["to"]), f"an egress rule open to everything: {rule}"
        assert rule.get("ports"), f"an egress rule open on every port: {rule}"
    assert egress == _expected_egress((values_file,), manifests)
    for rule in policy["spec"]["ingress"]:
        assert rule.get("from") and rule.get("ports"), f"an ingress rule open to everything: {rule}"
    for name, meta, _ in _carnet_pods(manifests):
        assert _selects(policy["spec"]["podSelector"], meta["labels"]), f"{name} escapes the NetworkPolicy"


def test_network_policy_is_on_by_default() -> None:
    assert _carnet_policy(render()) is not None


def test_vllm_answers_carnet_only_and_reaches_nothing() -> None:
    manifests = render(VLLM)
    pod_labels = one(manifests, "Deployment", "carnet-vllm")["spec"]["template"]["metadata"]["labels"]
    (policy,) = [
        m for m in manifests if m["kind"] == "NetworkPolicy" and _selects(m["spec"]["podSelector"], pod_labels)
    ]
    assert "Egress" in policy["spec"]["policyTypes"] and not policy["spec"].get("egress")
    (rule,) = policy["spec"]["ingress"]
    api_labels = one(manifests, "Deployment", "carnet-api")["spec"]["template"]["metadata"]["labels"]
    assert any(_selects(peer["podSelector"], api_labels) for peer in rule["from"])


@pytest.mark.parametrize("override", ["qdrant.egress.to=null", "postgres.egress.ports=null"])
def test_an_empty_egress_peer_list_is_refused(override: str) -> None:
    assert template_result(PRODUCTION, (override,)).returncode != 0


# --- secrets ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("values_file", CI_FILES)
def test_no_secret_is_rendered_and_no_configmap_holds_one(values_file: str) -> None:
    manifests = render((values_file,))
    assert not [m for m in manifests if m["kind"] == "Secret"]
    secret_names = _secret_settings()
    for m in (m for m in manifests if m["kind"] == "ConfigMap"):
        for key, value in m.get("data", {}).items():
            assert key not in secret_names and not SECRETISH.search(key), f"{m['metadata']['name']}: {key}"
            assert "PRIVATE KEY" not in value and "-----BEGIN" not in value, f"{m['metadata']['name']}: {key}"
    for name, spec in pod_specs(manifests):
        for c in _containers(spec):
            for env in c.get("env", []):
                if env["name"] in secret_names or SECRETISH.search(env["name"]):
                    assert "value" not in env, f"{name}/{c['name']}: {env['name']} in clear"


@pytest.mark.parametrize("name", ["CARNET_QDRANT__API_KEY", "CARNET_POSTGRES__DSN", "CARNET_VAULT__TOKEN"])
def test_a_secret_in_the_settings_values_is_refused(name: str) -> None:
    proc = template_result(PRODUCTION, (f"carnet.settings.{name}=canary-value",))
    assert proc.returncode != 0 and f"carnet.settings.{name} is a secret" in proc.stderr


@pytest.mark.parametrize("name", ["CARNET_TLS__TERMINATED_UPSTREAM", "CARNET_PORT", "CARNET_QDRANT__URL"])
def test_a_setting_the_chart_owns_cannot_be_overridden_by_the_settings_values(name: str) -> None:
    proc = template_result(PRODUCTION, (f"carnet.settings.{name}=true",))
    assert proc.returncode != 0 and "set by this chart" in proc.stderr


def _configured_secret_refs(v: dict[str, Any]) -> set[tuple[str, str]]:
    s = v["secrets"]
    refs = {
        (s[k]["existingSecret"], s[k]["key"]) for k in ("apiKeyPepper", "qdrantApiKey", "postgresPassword", "llmApiKey")
    }
    role = s["vaultAppRole"]
    return refs | {(role["existingSecret"], role["roleIdKey"]), (role["existingSecret"], role["secretIdKey"])}


@pytest.mark.parametrize("values_file", CI_FILES)
def test_secret_key_refs_point_at_the_configured_existing_secrets(values_file: str) -> None:
    manifests = render((values_file,))
    v = values((values_file,))
    allowed = _configured_secret_refs(v)
    vllm_ref = (v["vllm"]["apiKey"]["existingSecret"], v["vllm"]["apiKey"]["key"])
    pods = [(n, s) for n, _, s in _carnet_pods(manifests)]
    pods += [(n, s) for n, s in pod_specs(manifests) if n == "Deployment/carnet-vllm"]
    for name, spec in pods:
        for c in _containers(spec):
            for env in c.get("env", []):
                ref = env.get("valueFrom", {}).get("secretKeyRef")
                if ref:
                    expected = {vllm_ref} if name == "Deployment/carnet-vllm" else allowed
                    assert (ref["name"], ref["key"]) in expected, f"{name}: {env['name']} -> {ref}"


def test_the_chosen_secret_provider_brings_the_pepper() -> None:
    """secretKeyRef by default; files from the Vault Agent or the CSI driver, read by carnet-env-from-files."""
    api = one(render(), "Deployment", "carnet-api")["spec"]["template"]["spec"]["containers"][0]
    assert "CARNET_API_KEY_PEPPER" in {e["name"] for e in api["env"]}
    agent = one(render(VLLM), "Deployment", "carnet-api")["spec"]["template"]
    assert agent["metadata"]["annotations"]["vault.hashicorp.com/agent-inject"] == "true"
    assert "vault.hashicorp.com/agent-inject-secret-CARNET_API_KEY_PEPPER" in agent["metadata"]["annotations"]
    assert agent["spec"]["containers"][0]["command"] == ["carnet-env-from-files", "/vault/secrets", "carnet"]
    assert "env" not in agent["spec"]["containers"][0]
    csi = render(EMBEDDED)
    spc = one(csi, "SecretProviderClass", "carnet-vault")
    assert [o["objectName"] for o in yaml.safe_load(spc["spec"]["parameters"]["objects"])] == ["CARNET_API_KEY_PEPPER"]
    assert "secretObjects" not in spc["spec"], "nothing is synced into a Kubernetes Secret"
    api = one(csi, "Deployment", "carnet-api")["spec"]["template"]["spec"]
    assert api["containers"][0]["command"] == ["carnet-env-from-files", "/run/secrets/carnet", "carnet"]
    (volume,) = [vol for vol in api["volumes"] if vol["name"] == "secrets"]
    assert volume["csi"]["volumeAttributes"]["secretProviderClass"] == "carnet-vault"


# --- Carnet accepts its settings -------------------------------------------------------------------


def _file_secrets(meta: Manifest, spec: Manifest, manifests: tuple[Manifest, ...]) -> set[str]:
    """Setting names the Vault Agent or the CSI driver puts in files for this pod."""
    prefix = "vault.hashicorp.com/agent-inject-secret-"
    names = {k.removeprefix(prefix) for k in meta.get("annotations", {}) if k.startswith(prefix)}
    for volume in spec.get("volumes", []):
        if "csi" in volume:
            spc = one(manifests, "SecretProviderClass", volume["csi"]["volumeAttributes"]["secretProviderClass"])
            names |= {o["objectName"] for o in yaml.safe_load(spc["spec"]["parameters"]["objects"])}
    return names


def _tls_files(spec: Manifest) -> set[str]:
    (tls,) = [v for v in spec["volumes"] if v["name"] == "tls"]
    return {
        TLS_DIR + item["path"]
        for source in tls["projected"]["sources"]
        for item in next(iter(source.values()))["items"]
    }


def _environment(container: Manifest, manifests: tuple[Manifest, ...], file_secrets: set[str]) -> dict[str, str]:
    """What the container's process sees: the ConfigMap, plain env, placeholders for each secret."""
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        env |= one(manifests, "ConfigMap", source["configMapRef"]["name"])["data"]
    for item in container.get("env", []):
        env[item["name"]] = item["value"] if "value" in item else f"placeholder-{item['name'].lower()}"
    return env | {name: f"placeholder-{name.lower()}" for name in file_secrets}


@pytest.mark.parametrize("values_file", CI_FILES)
def test_carnet_accepts_the_rendered_settings(
    values_file: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Each Carnet container's environment builds Settings: no unknown name, production checks pass, every
    certificate path is a file its pod mounts (stand-ins in tmp_path, as Settings opens the server's)."""
    manifests = render((values_file,))
    pods = _carnet_pods(manifests)
    assert pods
    for name, meta, spec in pods:
        container = spec["containers"][0]
        if container["command"][-1] != "carnet":
            continue  # the backup CronJob: a shell script reading the same settings
        env = _environment(container, manifests, _file_secrets(meta, spec, manifests))
        assert all(_known(k) for k in env if k.startswith("CARNET_")), name
        mounted = _tls_files(spec)
        for key, value in list(env.items()):
            if value.startswith(TLS_DIR):
                assert value in mounted, f"{name}: {key}={value} is not mounted"
                stand_in = tmp_path / value.removeprefix("/")
                stand_in.parent.mkdir(parents=True, exist_ok=True)
                stand_in.touch()
                env[key] = str(stand_in)
        for var in [n for n in os.environ if n.startswith("CARNET_")]:
            monkeypatch.delenv(var)
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        settings = Settings(_env_file=None)  # type: ignore[call-arg]
        assert settings.environment is Environment.PRODUCTION and settings.host == "0.0.0.0", name


def test_the_api_serves_where_the_service_and_probes_look() -> None:
    for files in (PRODUCTION, EMBEDDED):
        manifests = render(files)
        api = one(manifests, "Deployment", "carnet-api")["spec"]["template"]["spec"]["containers"][0]
        port = int(one(manifests, "ConfigMap", "carnet-settings")["data"]["CARNET_PORT"])
        (container_port,) = api["ports"]
        assert container_port["containerPort"] == port
        (service_port,) = one(manifests, "Service", "carnet")["spec"]["ports"]
        assert service_port["targetPort"] == container_port["name"]
        assert api["readinessProbe"]["httpGet"]["path"] == "/readyz"
        assert api["livenessProbe"]["httpGet"]["path"] == "/healthz"


# --- TLS everywhere --------------------------------------------------------------------------------


@pytest.mark.parametrize("values_file", CI_FILES)
def test_every_link_speaks_tls_and_serve_does_too_or_stands_behind_the_ingress(values_file: str) -> None:
    manifests = render((values_file,))
    settings = one(manifests, "ConfigMap", "carnet-settings")["data"]
    for key, value in settings.items():
        assert "http://" not in value, f"{key}={value}"
    for link, url in (("QDRANT", "URL"), ("VAULT", "URL"), ("LLM", "BASE_URL"), ("EMBED_SERVER", "BASE_URL")):
        if f"CARNET_{link}__{url}" in settings:
            assert settings[f"CARNET_{link}__{url}"].startswith("https://")
            assert settings[f"CARNET_{link}__CA_CERT"].startswith(TLS_DIR)
    if settings["CARNET_CATALOG"] == "postgres":
        assert settings["CARNET_POSTGRES__SSLMODE"] == "verify-full"
        assert settings["CARNET_POSTGRES__CA_CERT"].startswith(TLS_DIR)
    if "CARNET_TLS__CERT_FILE" in settings:
        assert settings["CARNET_TLS__KEY_FILE"].startswith(TLS_DIR)
        api = one(manifests, "Deployment", "carnet-api")["spec"]["template"]["spec"]["containers"][0]
        assert api["readinessProbe"]["httpGet"]["scheme"] == "HTTPS"
    else:
        assert settings.get("CARNET_TLS__TERMINATED_UPSTREAM") == "true"
        kinds = {m["kind"] for m in manifests}
        assert {"Ingress", "NetworkPolicy"} <= kinds, "clear only behind a TLS ingress and a NetworkPolicy"
    for ingress in (m for m in manifests if m["kind"] == "Ingress"):
        (tls,) = ingress["spec"]["tls"]
        assert {rule["host"] for rule in ingress["spec"]["rules"]} <= set(tls["hosts"]) and tls["secretName"]


def test_production_has_no_clear_outbound_url_and_wires_client_certificates() -> None:
    manifests = render(PRODUCTION)
    text = yaml.safe_dump_all(list(manifests))
    assert "http://" not in text
    settings = one(manifests, "ConfigMap", "carnet-settings")["data"]
    assert settings["CARNET_QDRANT__CLIENT_CERT"] == TLS_DIR + "qdrant-client.crt"
    assert settings["CARNET_POSTGRES__CLIENT_KEY"] == TLS_DIR + "postgres-client.key"
    assert settings["CARNET_VAULT__CA_CERT"] == TLS_DIR + "vault-ca.pem"
    assert settings["CARNET_TLS__MIN_VERSION"] == "TLSv1.3"
    (monitor,) = [m for m in manifests if m["kind"] == "ServiceMonitor"]
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["scheme"] == "https" and endpoint["tlsConfig"]["ca"]["configMap"]["name"] == "bank-internal-ca"


@pytest.mark.parametrize(
    "sets",
    [
        ("tls.server.existingSecret=",),
        ("tls.server.existingSecret=", "tls.terminatedUpstream=true", "ingress.enabled=false"),
        ("tls.server.existingSecret=", "tls.terminatedUpstream=true", "networkPolicy.enabled=false"),
    ],
)
def test_a_clear_listener_is_refused_without_the_ingress_and_the_network_policy(sets: tuple[str, ...]) -> None:
    assert template_result(PRODUCTION, sets).returncode != 0


# --- the embedded engine ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sets",
    [
        ("api.replicaCount=2",),
        ("autoscaling.enabled=true", "autoscaling.maxReplicas=3"),
    ],
)
def test_the_embedded_engine_refuses_more_than_one_replica(sets: tuple[str, ...]) -> None:
    proc = template_result(EMBEDDED, sets)
    assert proc.returncode != 0
    assert "embedded vector engine (carnet.vectorBackend=edge) is one on-disk shard owned by one process" in proc.stderr


def test_the_embedded_engine_runs_workers_and_scheduler_in_its_one_pod() -> None:
    manifests = render(EMBEDDED)
    kinds = [(m["kind"], m["metadata"]["name"]) for m in manifests]
    assert ("Deployment", "carnet-worker") not in kinds and not [k for k, _ in kinds if k in {"CronJob", "Job"}]
    api = one(manifests, "Deployment", "carnet-api")
    assert api["spec"]["replicas"] == 1 and api["spec"]["strategy"]["type"] == "Recreate"
    settings = one(manifests, "ConfigMap", "carnet-settings")["data"]
    assert settings["CARNET_WORKERS__IN_PROCESS"] == "true" and settings["CARNET_MAINTENANCE__SCHEDULER"] == "true"
    assert settings["CARNET_MAINTENANCE__BACKUP_KEEP"] == "7"
    claims = {
        v["name"]: v["persistentVolumeClaim"]["claimName"]
        for v in api["spec"]["template"]["spec"]["volumes"]
        if "persistentVolumeClaim" in v
    }
    assert set(claims) == {"data", "keys", "backups"} and len(set(claims.values())) == 3
    assert not [m for m in manifests if m["kind"] in {"PodDisruptionBudget", "HorizontalPodAutoscaler"}]


def test_the_server_backend_runs_workers_and_cronjobs_outside_the_api() -> None:
    manifests = render(PRODUCTION)
    settings = one(manifests, "ConfigMap", "carnet-settings")["data"]
    assert settings["CARNET_WORKERS__IN_PROCESS"] == "false" and settings["CARNET_MAINTENANCE__SCHEDULER"] == "false"
    worker = one(manifests, "Deployment", "carnet-worker")["spec"]["template"]["spec"]["containers"][0]
    assert worker["args"] == ["worker"]
    maintain = one(manifests, "CronJob", "carnet-maintenance")["spec"]
    assert maintain["concurrencyPolicy"] == "Forbid"
    assert maintain["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["args"] == ["maintain"]
    assert "replicas" not in one(manifests, "Deployment", "carnet-api")["spec"], "the HPA owns the replica count"
    assert one(manifests, "HorizontalPodAutoscaler", "carnet-api")["spec"]["maxReplicas"] == 10
    assert {m["metadata"]["name"] for m in manifests if m["kind"] == "PodDisruptionBudget"} == {
        "carnet-api",
        "carnet-worker",
    }


def test_the_backup_cronjob_runs_the_repositorys_script() -> None:
    for script in ("carnet-backup-snapshot", "carnet-env-from-files"):
        assert (CHART / "files" / script).read_bytes() == (ROOT / "deploy" / "bin" / script).read_bytes()
    manifests = render(PRODUCTION)
    scripts = one(manifests, "ConfigMap", "carnet-backup-scripts")["data"]
    original = (ROOT / "deploy" / "bin" / "carnet-backup-snapshot").read_text()
    assert scripts["carnet-backup-snapshot"] == original.rstrip("\n")
    job = one(manifests, "CronJob", "carnet-backup")["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    (container,) = job["containers"]
    assert container["command"] == ["/bin/sh", "/opt/carnet-backup/carnet-backup-snapshot", "14"]
    assert container["image"] == "registry.example.internal/carnet-backup-tools:2026.11"
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert mounts["backups"] == "/var/lib/carnet/backups" and mounts["tls"] == "/etc/carnet/tls"
    assert template_result(PRODUCTION, ("backup.image.repository=",)).returncode != 0


# --- hooks: migrations and helm test ---------------------------------------------------------------


def test_migrations_run_in_a_pre_install_and_pre_upgrade_hook() -> None:
    manifests = render(PRODUCTION)
    job = one(manifests, "Job", "carnet-migrate")
    assert job["metadata"]["annotations"]["helm.sh/hook"] == "pre-install,pre-upgrade"
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert container["args"] == ["db", "migrate"] and "envFrom" not in container, "the ConfigMap does not exist yet"
    assert one(manifests, "ConfigMap", "carnet-settings")["data"]["CARNET_POSTGRES__AUTO_MIGRATE"] == "false"
    sa = one(manifests, "ServiceAccount", "carnet-migrate")
    assert job["spec"]["template"]["spec"]["serviceAccountName"] == sa["metadata"]["name"]
    weight = "helm.sh/hook-weight"
    assert int(sa["metadata"]["annotations"][weight]) < int(job["metadata"]["annotations"][weight])
    claims = [v for v in job["spec"]["template"]["spec"]["volumes"] if "persistentVolumeClaim" in v]
    assert claims == [], "the release's claims do not exist before install"


@pytest.mark.parametrize("values_file", CI_FILES)
def test_helm_test_checks_readyz_through_the_service_with_the_ca(values_file: str) -> None:
    manifests = render((values_file,))
    (pod,) = [m for m in manifests if m["kind"] == "Pod"]
    assert pod["metadata"]["annotations"]["helm.sh/hook"] == "test"
    command = pod["spec"]["containers"][0]["command"]
    assert command[0] == "python" and 'cafile="/etc/carnet/tls/ca.pem"' in command[2]
    url = command[3]
    settings = one(manifests, "ConfigMap", "carnet-settings")["data"]
    scheme = "https" if "CARNET_TLS__CERT_FILE" in settings else "http"
    service = one(manifests, "Service", "carnet")
    assert url == f"{scheme}://carnet.carnet.svc:{service['spec']['ports'][0]['port']}/readyz"
    assert TLS_DIR + "ca.pem" in _tls_files(pod["spec"])


# --- vLLM ------------------------------------------------------------------------------------------


def test_vllm_serves_mistral_on_gpus_from_a_local_model() -> None:
    manifests = render(VLLM)
    v = values(VLLM)
    spec = one(manifests, "Deployment", "carnet-vllm")["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    args = container["args"]
    flags = dict(a.split("=", 1) if "=" in a else (a, "") for a in args if a.startswith("--"))
    assert flags["--served-model-name"] == v["llm"]["model"]
    assert flags["--structured-outputs-config.backend"] == "xgrammar" and "--enable-prefix-caching" in flags
    assert flags["--tensor-parallel-size"] == "2" and flags["--max-model-len"] == "32768"
    assert flags["--ssl-certfile"] and flags["--ssl-keyfile"] and "--api-key" not in flags
    assert args[0] == "/models/" + v["vllm"]["model"]["path"]
    key = next(e for e in container["env"] if e["name"] == "VLLM_API_KEY")
    assert key["valueFrom"]["secretKeyRef"] == {"name": "vllm-api-key", "key": "api-key"}
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 2
    assert spec["nodeSelector"] and spec["tolerations"]
    (models,) = [vol for vol in spec["volumes"] if vol["name"] == "models"]
    assert models["persistentVolumeClaim"] == {"claimName": "mistral-small-3-2-weights", "readOnly": True}
    settings = one(manifests, "ConfigMap", "carnet-settings")["data"]
    service = one(manifests, "Service", "carnet-vllm")
    assert settings["CARNET_LLM__BASE_URL"] == f"https://carnet-vllm.carnet.svc:{service['spec']['ports'][0]['port']}"
    assert template_result(VLLM, ("vllm.model.existingClaim=",)).returncode != 0


def test_vllm_serves_the_embedding_model_and_carnet_reads_its_key_from_a_file() -> None:
    values_file = ("vllm-embed-values.yaml",)
    manifests = render(values_file)
    v = values(values_file)
    spec = one(manifests, "Deployment", "carnet-vllm-embed")["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    flags = dict(a.split("=", 1) if "=" in a else (a, "") for a in container["args"] if a.startswith("--"))
    assert flags["--served-model-name"] == v["embedServer"]["model"] and "--runner" in flags
    assert flags["--max-model-len"] == "512" and flags["--ssl-certfile"] and "--api-key" not in flags
    key = next(e for e in container["env"] if e["name"] == "VLLM_API_KEY")
    assert key["valueFrom"]["secretKeyRef"] == {"name": "vllm-embed-api-key", "key": "api-key"}
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 1 and spec["nodeSelector"]
    settings = one(manifests, "ConfigMap", "carnet-settings")["data"]
    service = one(manifests, "Service", "carnet-vllm-embed")
    assert settings["CARNET_EMBEDDER"] == "remote"
    assert settings["CARNET_EMBED_SERVER__BASE_URL"] == (
        f"https://carnet-vllm-embed.carnet.svc:{service['spec']['ports'][0]['port']}")
    assert settings["CARNET_EMBED_SERVER__PREFIXES"] == "client"  # vLLM embeds what it receives
    assert settings["CARNET_EMBED_SERVER__API_KEY_FILE"] == TLS_DIR + "embed-api-key"
    assert "CARNET_EMBED_SERVER__API_KEY" not in settings  # a file, never a variable
    for name, _, pod in _carnet_pods(manifests):
        assert TLS_DIR + "embed-api-key" in _tls_files(pod), f"{name} does not mount the embedding server's key"
    pod_labels = one(manifests, "Deployment", "carnet-vllm-embed")["spec"]["template"]["metadata"]["labels"]
    (policy,) = [m for m in manifests
                 if m["kind"] == "NetworkPolicy" and _selects(m["spec"]["podSelector"], pod_labels)]
    assert "Egress" in policy["spec"]["policyTypes"] and not policy["spec"].get("egress")
    refused = template_result(values_file, ("carnet.embedder=e5-fast",))
    assert refused.returncode != 0 and "carnet.embedder=remote" in refused.stderr
    default = one(render(), "ConfigMap", "carnet-settings")["data"]
    assert default["CARNET_EMBEDDER"] == "e5-fast" and not any(k.startswith("CARNET_EMBED_SERVER__") for k in default)


def test_ingress_trusted_proxies_reach_the_api_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rendered as the JSON list the setting reads (and loaded back through the environment)."""
    default = one(render(PRODUCTION), "ConfigMap", "carnet-settings")["data"]
    assert "CARNET_API__TRUSTED_PROXIES" not in default
    manifests = render(PRODUCTION, ("ingress.trustedProxies[0]=10.42.0.0/16", "ingress.trustedProxies[1]=10.43.1.7"))
    rendered = one(manifests, "ConfigMap", "carnet-settings")["data"]["CARNET_API__TRUSTED_PROXIES"]
    for name in [n for n in os.environ if n.startswith("CARNET_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("CARNET_API__TRUSTED_PROXIES", rendered)
    assert Settings(_env_file=None).api.trusted_proxies == ["10.42.0.0/16", "10.43.1.7"]  # type: ignore[call-arg]


# --- Qdrant cluster ---------------------------------------------------------------------------------

QDRANT_EXAMPLE = ROOT / "helm" / "examples" / "qdrant-cluster-values.yaml"
_LAYOUT = ("CARNET_QDRANT__SHARD_NUMBER", "CARNET_QDRANT__REPLICATION_FACTOR",
           "CARNET_QDRANT__WRITE_CONSISTENCY_FACTOR")


def test_the_production_values_create_the_collection_for_the_three_node_cluster(
        monkeypatch: pytest.MonkeyPatch) -> None:
    data = one(render(PRODUCTION), "ConfigMap", "carnet-settings")["data"]
    assert [data[k] for k in _LAYOUT] == ["6", "2", "2"]
    assert (data["CARNET_QDRANT__WRITE_ORDERING"], data["CARNET_QDRANT__READ_CONSISTENCY"]) == ("medium", "1")
    for name in [n for n in os.environ if n.startswith("CARNET_")]:
        monkeypatch.delenv(name)
    for key in (*_LAYOUT, "CARNET_QDRANT__WRITE_ORDERING", "CARNET_QDRANT__READ_CONSISTENCY"):
        monkeypatch.setenv(key, data[key])
    q = Settings(_env_file=None).qdrant  # type: ignore[call-arg]
    assert (q.shard_number, q.replication_factor, q.write_consistency_factor, q.read_consistency) == (6, 2, 2, 1)


def test_by_default_qdrant_chooses_the_layout() -> None:
    data = one(render(("minimal-values.yaml",)), "ConfigMap", "carnet-settings")["data"]
    assert not set(_LAYOUT) & set(data)
    assert (data["CARNET_QDRANT__WRITE_ORDERING"], data["CARNET_QDRANT__READ_CONSISTENCY"]) == ("medium", "1")
    assert data["CARNET_QDRANT__SHARDING"] == "auto" and "CARNET_QDRANT__FALLBACK_SHARD_KEY" not in data
    named = one(render(PRODUCTION, ("qdrant.readConsistency=majority",)), "ConfigMap", "carnet-settings")["data"]
    assert named["CARNET_QDRANT__READ_CONSISTENCY"] == "majority"
    tiered = one(render(("minimal-values.yaml",), ("qdrant.sharding=tiered", "qdrant.fallbackShardKey=small")),
                 "ConfigMap", "carnet-settings")["data"]
    assert (tiered["CARNET_QDRANT__SHARDING"], tiered["CARNET_QDRANT__FALLBACK_SHARD_KEY"]) == ("tiered", "small")


@pytest.mark.parametrize(("sets", "message"), [
    (("qdrant.writeConsistencyFactor=3",), r"writeConsistencyFactor \(3\) cannot exceed qdrant.replicationFactor \(2"),
    (("qdrant.replicationFactor=0",), r"writeConsistencyFactor \(2\) cannot exceed qdrant.replicationFactor \(0"),
    (("qdrant.readConsistency=most",), "readConsistency"),
    (("qdrant.writeOrdering=eventual",), "writeOrdering"),
    (("qdrant.sharding=tiered",), "qdrant.sharding=tiered keeps small tenants in one fallback shard"),
    (("qdrant.sharding=per-tenant",), "sharding"),
])
def test_a_qdrant_layout_qdrant_would_refuse_is_refused(sets: tuple[str, ...], message: str) -> None:
    proc = template_result(PRODUCTION, sets)
    assert proc.returncode != 0 and re.search(message, proc.stderr), proc.stderr


def test_the_qdrant_chart_example_is_a_three_node_cluster_with_tls_everywhere() -> None:
    """helm/examples/qdrant-cluster-values.yaml, values for Qdrant's own chart (not rendered here: that
    chart is not vendored), matches the layout Carnet's production values ask for."""
    q = yaml.safe_load(QDRANT_EXAMPLE.read_text())
    assert q["replicaCount"] == 3
    config = q["config"]
    assert config["cluster"]["enabled"] is True and config["cluster"]["p2p"] == {"port": 6335, "enable_tls": True}
    assert config["service"]["enable_tls"] is True and config["tls"]["ca_cert"]  # peers verify each other
    mounted = {m["mountPath"] for m in q["additionalVolumeMounts"]}
    assert all(any(config["tls"][k].startswith(p + "/") for p in mounted) for k in ("cert", "key", "ca_cert"))
    assert q["apiKey"]["valueFrom"]["secretKeyRef"] and q["readOnlyApiKey"]["valueFrom"]["secretKeyRef"]
    assert q["podDisruptionBudget"] == {"enabled": True, "maxUnavailable": 1}
    assert q["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    carnet = values(PRODUCTION)["qdrant"]
    assert carnet["shardNumber"] % q["replicaCount"] == 0 and carnet["replicationFactor"] < q["replicaCount"]
    assert carnet["url"].startswith("https://")
