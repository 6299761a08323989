"""Render helm/carnet with the pinned `helm` and validate what it renders, strictly.

`helm` is looked for beside this interpreter (scripts/install-helm.sh puts it in .venv/bin). Built-in
kinds are validated by kubernetes-validate's strict schemas (an unknown field is an error) for the
Kubernetes version the chart's `kubeVersion` starts at; the custom resources the chart renders are
validated against the JSON schemas in kubernetes_schemas/, written from their CRDs' openAPIV3Schema and
closed the same way. A kind with no schema at all is an error, never a silent skip.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "helm" / "carnet"
HELM = Path(sys.executable).parent / "helm"
CRD_SCHEMAS = Path(__file__).resolve().parent / "kubernetes_schemas"
# apiVersion -> the schema file of the custom resources the chart can render.
CUSTOM_KINDS = {
    ("monitoring.coreos.com/v1", "ServiceMonitor"): "servicemonitor-monitoring-v1.json",
    ("secrets-store.csi.x-k8s.io/v1", "SecretProviderClass"): "secretproviderclass-secrets-store-v1.json",
}
Manifest = dict[str, Any]


def kube_version() -> str:
    """The lowest Kubernetes version Chart.yaml's ``kubeVersion`` accepts (``>=1.30.0-0`` -> ``1.30.0``)."""
    constraint = yaml.safe_load((CHART / "Chart.yaml").read_text())["kubeVersion"]
    match = re.fullmatch(r">=\s*(\d+\.\d+\.\d+)(-0)?", constraint)
    assert match, f"kubeVersion {constraint!r}: expected a single lower bound, >=X.Y.Z-0"
    return match.group(1)


def helm(*args: str) -> subprocess.CompletedProcess[str]:
    if not HELM.exists():
        pytest.fail(
            f"helm is not installed beside {sys.executable}: run `bash scripts/install-helm.sh "
            f"{HELM.parent}` (scripts/test.sh does)"
        )
    return subprocess.run([str(HELM), *args], capture_output=True, text=True, timeout=60, check=False)


def _value_args(values_files: tuple[str, ...], sets: tuple[str, ...]) -> list[str]:
    args = [arg for name in values_files for arg in ("--values", str(CHART / "ci" / name))]
    return args + [arg for item in sets for arg in ("--set", item)]


def template_result(values_files: tuple[str, ...] = (), sets: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    return helm(
        "template",
        "carnet",
        str(CHART),
        "--namespace",
        "carnet",
        "--kube-version",
        kube_version(),
        *_value_args(values_files, sets),
    )


@cache
def render(values_files: tuple[str, ...] = (), sets: tuple[str, ...] = ()) -> tuple[Manifest, ...]:
    """Every manifest `helm template` renders (hooks and the test pod included), parsed."""
    proc = template_result(values_files, sets)
    assert proc.returncode == 0, f"helm template {values_files} {sets} failed:\n{proc.stderr}"
    return tuple(doc for doc in yaml.safe_load_all(proc.stdout) if doc)


def values(values_files: tuple[str, ...] = ()) -> dict[str, Any]:
    """The chart's values.yaml with those files merged over it, as helm merges them (maps deeply)."""

    def merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
        out = dict(base)
        for key, value in over.items():
            out[key] = merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
        return out

    merged: dict[str, Any] = yaml.safe_load((CHART / "values.yaml").read_text())
    for name in values_files:
        merged = merge(merged, yaml.safe_load((CHART / "ci" / name).read_text()) or {})
    return merged


@cache
def _crd_validator(schema_file: str) -> jsonschema.Draft202012Validator:
    schema = json.loads((CRD_SCHEMAS / schema_file).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def validate(manifest: Manifest) -> None:
    """Raise if the manifest breaks its kind's schema (strict), or if no schema is known for its kind."""
    custom = CUSTOM_KINDS.get((manifest["apiVersion"], manifest["kind"]))
    if custom:
        _crd_validator(custom).validate(manifest)
    else:
        kubernetes_validate.validate(manifest, kube_version(), strict=True)


def pod_specs(manifests: tuple[Manifest, ...]) -> Iterator[tuple[str, Manifest]]:
    """(``Kind/name``, pod spec) of every pod the manifests would create."""
    for m in manifests:
        spec = m.get("spec", {})
        name = f"{m['kind']}/{m['metadata']['name']}"
        if m["kind"] == "Pod":
            yield name, spec
        elif m["kind"] in {"Deployment", "StatefulSet", "DaemonSet", "Job"}:
            yield name, spec["template"]["spec"]
        elif m["kind"] == "CronJob":
            yield name, spec["jobTemplate"]["spec"]["template"]["spec"]


def pod_templates(manifests: tuple[Manifest, ...]) -> Iterator[tuple[str, Manifest]]:
    """(``Kind/name``, pod metadata) of the same pods: their labels and annotations."""
    for m in manifests:
        spec = m.get("spec", {})
        name = f"{m['kind']}/{m['metadata']['name']}"
        if m["kind"] == "Pod":
            yield name, m["metadata"]
        elif m["kind"] in {"Deployment", "StatefulSet", "DaemonSet", "Job"}:
            yield name, spec["template"]["metadata"]
        elif m["kind"] == "CronJob":
            yield name, spec["jobTemplate"]["spec"]["template"]["metadata"]


def one(manifests: tuple[Manifest, ...], kind: str, name: str) -> Manifest:
    found = [m for m in manifests if m["kind"] == kind and m["metadata"]["name"] == name]
    assert len(found) == 1, f"{kind}/{name}: {len(found)} rendered"
    return found[0]
