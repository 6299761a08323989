"""The air-gapped bundle (scripts/bundle.py, `make bundle`) holds what a site without internet needs, and
Carnet installs and runs from it with the network cut.

The archive is built once for the module (~1.5 min; its build installs Carnet from the wheelhouse alone to
check it, and that venv is kept). The install test runs pip's resolver on the unpacked requirements.txt and
`carnet demo` inside a new network namespace (`unshare --net`, then loopback brought up: no other interface,
no route out), so a dependency missing from the wheelhouse, or anything fetched at run time, fails it.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator

from tests.support.bundle_script import BUNDLE_VENV

pytestmark = pytest.mark.slow
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def bundle(carnet_bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The archive, checked against its .sha256 and unpacked in a new directory (as the site receives it)."""
    checksum, name = (carnet_bundle.parent / f"{carnet_bundle.name}.sha256").read_text().split()
    assert name == carnet_bundle.name and checksum == _sha256(carnet_bundle)
    dest = tmp_path_factory.mktemp("site")
    with tarfile.open(carnet_bundle) as tar:
        tar.extractall(dest, filter="data")
    (tree,) = dest.iterdir()
    assert tree.name == carnet_bundle.name.removesuffix(".tar")
    return tree


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _offline(*args: str | Path, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``args`` in a new network namespace whose only interface is loopback (brought up: the demo serves on it)."""
    ip = shutil.which("ip") or "/usr/sbin/ip"
    cmd = ["unshare", "--net", "--", "sh", "-c", f'{ip} link set lo up && exec "$@"', "offline", *map(str, args)]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_sha256sums_cover_every_file(bundle: Path) -> None:
    listed = {}
    for line in (bundle / "SHA256SUMS").read_text().splitlines():
        digest, _, rel = line.partition("  ")
        listed[rel] = digest
    files = {p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file()} - {"SHA256SUMS"}
    assert set(listed) == files
    for rel, digest in listed.items():
        assert _sha256(bundle / rel) == digest, rel


def test_it_holds_the_chart_the_collection_and_the_deploy_files(bundle: Path) -> None:
    (chart,) = (bundle / "helm").glob("carnet-*.tgz")
    shown = subprocess.run([str(BIN / "helm"), "show", "chart", str(chart)], capture_output=True, text=True)
    assert shown.returncode == 0 and "name: carnet" in shown.stdout, shown.stderr
    (collection,) = (bundle / "ansible").glob("carnet-sovereign-*.tar.gz")
    with tarfile.open(collection) as tar:
        info = json.loads(tar.extractfile("MANIFEST.json").read())["collection_info"]  # type: ignore[union-attr]
        names = set(tar.getnames())
    assert (info["namespace"], info["name"]) == ("carnet", "sovereign")
    for role in ("carnet", "qdrant", "openbao", "vllm", "postgresql_wiring"):
        assert f"roles/{role}/tasks/main.yml" in names
    for path in (
        "deploy/Dockerfile",
        "deploy/compose.yaml",
        "deploy/grafana/carnet-dashboard.json",
        "deploy/bin/carnet-env-from-files",
        "INSTALL.md",
        "SECURITY.md",
        "docs/operations.md",
        "docs/air-gapped.md",
    ):
        assert (bundle / path).is_file(), path
    assert sorted(p.name for p in (bundle / "deploy" / "systemd").iterdir()) == sorted(
        p.name for p in (Path(__file__).resolve().parents[2] / "deploy" / "systemd").iterdir()
    )


def test_the_sbom_is_valid_cyclonedx_and_lists_what_installs(bundle: Path) -> None:
    text = (bundle / "sbom.cdx.json").read_text()
    error = JsonStrictValidator(SchemaVersion.V1_6).validate_str(text)
    assert error is None, error
    sbom = json.loads(text)
    root = sbom["metadata"]["component"]
    packages = [root, *(c for c in sbom["components"] if c["type"] == "library")]
    components = {(_normalized(c["name"]), c.get("version")) for c in packages}
    for line in (bundle / "requirements.txt").read_text().splitlines():
        name, _, version = line.partition("==")
        assert (_normalized(name), version) in components, line
    assert ("torch", "2.13.0+cpu") in components and (root["name"], root["version"]) == ("carnet", "0.1.0")
    # Every package but the root carries the SHA-256 of the wheel it was installed from.
    wheels = {_sha256(w) for w in (bundle / "wheelhouse").glob("*.whl")}
    for c in packages[1:]:
        if c["name"] not in ("pip", "setuptools"):  # the venv's own, not from the wheelhouse
            assert c["hashes"][0]["content"] in wheels, c["name"]
    files = {c["name"]: c["hashes"][0]["content"] for c in sbom["components"] if c["type"] == "file"}
    packaged = [*(bundle / "helm").glob("*.tgz"), *(bundle / "ansible").glob("*.tar.gz")]
    assert files == {p.name: _sha256(p) for p in packaged}


def test_installs_from_the_wheelhouse_and_runs_the_demo_with_no_network(
        bundle: Path, carnet_bundle: Path, tmp_path: Path) -> None:
    """The site's install is the bundle's own check (scripts/bundle.py installs Carnet from the wheelhouse
    with ``--no-index`` into a fresh venv, kept here): installing it a second time took two to three
    minutes of the suite and could find nothing more, since pip with ``--no-index`` and a wheelhouse of
    wheels only reads no network. What the unpacked archive must still show is that its requirements.txt
    resolves from its own wheelhouse alone, every pin at once (pip's resolver, ``--ignore-installed``, no
    install), and that the demo runs with the network cut."""
    venv = carnet_bundle.parent / BUNDLE_VENV
    assert not list((bundle / "wheelhouse").glob("*.tar.gz")), "wheels only: an sdist would build at the site"
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8", "COLUMNS": "160"}
    resolved = _offline(
        venv / "bin" / "python", "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
        "--disable-pip-version-check", "--no-index", "--find-links", bundle / "wheelhouse",
        "--report", tmp_path / "report.json", "-r", bundle / "requirements.txt", cwd=tmp_path, env=env)
    assert resolved.returncode == 0, resolved.stdout + resolved.stderr
    report = json.loads((tmp_path / "report.json").read_text())["install"]
    would = {_normalized(i["metadata"]["name"]): i["metadata"]["version"] for i in report}
    pinned = dict(line.split("==") for line in (bundle / "requirements.txt").read_text().split())
    assert would == {_normalized(name): version for name, version in pinned.items()}
    assert all(i["download_info"]["url"].startswith("file://") for i in report)
    demo = _offline(venv / "bin" / "carnet", "demo", cwd=tmp_path, env=env)
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "Contexte assemblé pour le LLM" in demo.stdout
