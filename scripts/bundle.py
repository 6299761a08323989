"""Builds Carnet's air-gapped bundle: one archive that installs the whole product without internet.

    python scripts/bundle.py [--out dist] [--pip-arg=--index-url=https://mirror/simple ...]
    (or `make bundle`)

Run it on a connected Linux or macOS host with the dev tools installed (`pip install -e '.[dev]'` and
`scripts/install-helm.sh .venv/bin`, which scripts/test.sh does). It writes, in OUT:

    carnet-bundle-<version>-linux-x86_64/           the unpacked tree, then the same tree as
    carnet-bundle-<version>-linux-x86_64.tar        one archive, and
    carnet-bundle-<version>-linux-x86_64.tar.sha256 the archive's checksum (carry it apart).

The tree holds:
    wheelhouse/     Carnet's wheel, the SDK's (carnet-client), and a wheel of every dependency for CPython
                    3.11 on Linux x86_64 (manylinux), torch's CPU build included; nothing to compile.
    requirements.txt  the exact versions installed from it (pip install -r ... --no-index).
    helm/           the packaged chart (`helm package`).
    ansible/        the carnet.sovereign collection (`ansible-galaxy collection build`).
    deploy/         Dockerfile, compose.yaml and its files, example settings, systemd units, Grafana dashboard.
    docs/, SECURITY.md, README.md, INSTALL.md (the checks to run first, then docs/air-gapped.md).
    sbom.cdx.json   CycloneDX 1.6: every Python package of an installation from the wheelhouse (read from
                    that installation), plus the chart and the collection with their SHA-256.
    SHA256SUMS      every file above (`sha256sum --check SHA256SUMS`).

The chart's and the collection's copies of deploy/'s scripts and hardening block are checked equal to
deploy/ first (`scripts/sync-deploy-copies --check`; the bundle refuses otherwise). The wheelhouse is
checked while it is built: a fresh virtual environment installs Carnet from it with
`--no-index` (what the site will do), and the SBOM is read from that environment. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLATFORM = "linux-x86_64"
# pip's tags for the target: CPython 3.11, glibc >= 2.17 (RHEL 8, Debian 11, Ubuntu 20.04 and later).
PIP_TARGET = [
    "--only-binary=:all:",
    "--implementation=cp",
    "--python-version=3.11",
    "--platform=manylinux_2_28_x86_64",
    "--platform=manylinux_2_17_x86_64",
    "--platform=manylinux2014_x86_64",
    "--platform=linux_x86_64",
]
EXTRAS = "postgres"
# torch's CPU build, pinned as pyproject.toml pins it, resolved first: otherwise a CUDA build (several GB).
TORCH = "torch==2.13.0"
DEPLOY_PARTS = [
    "Dockerfile",
    "Dockerfile.dockerignore",
    "README.md",
    "compose.yaml",
    "compose",
    "settings",
    "systemd",
    "bin",
    "grafana",
]
DOCS = ["README.md", "SECURITY.md"]


INSTALL = """# Carnet {version}: offline installation

Check the archive, then every file, before anything else:

    sha256sum --check {name}.tar.sha256      # beside the archive
    sha256sum --check --strict SHA256SUMS    # in this directory

Then follow docs/air-gapped.md: a host install from wheelhouse/, the Ansible collection in ansible/,
the Helm chart in helm/, and how to build Carnet's image from this directory with no network.
"""


class BundleError(RuntimeError):
    """A step failed; its message says which and why."""


def _step(message: str) -> float:
    print(f"bundle: {message}", file=sys.stderr, flush=True)
    return time.monotonic()


def _done(started: float) -> None:
    print(f"bundle:   done in {time.monotonic() - started:.1f} s", file=sys.stderr, flush=True)


def _run(*args: str | Path, cwd: Path = ROOT, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BundleError(f"{' '.join(str(a) for a in args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def _tool(name: str) -> str:
    """``name`` beside this interpreter (the dev venv), else on PATH."""
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        hint = "scripts/install-helm.sh .venv/bin" if name == "helm" else "pip install -e '.[dev]'"
        raise BundleError(f"{name} is needed to build the bundle: {hint}")
    return found


def _version() -> str:
    return str(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"])


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def build_wheelhouse(wheelhouse: Path, pip_args: list[str]) -> Path:
    """Carnet's and the SDK's wheels, then every dependency for the target; returns Carnet's wheel."""
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    _run(*pip, "wheel", "--quiet", "--no-deps", "--wheel-dir", wheelhouse, ROOT, ROOT / "clients" / "python")
    carnet = next(wheelhouse.glob("carnet-*.whl"))
    _run(*pip, "download", "--quiet", *PIP_TARGET, *pip_args, "--dest", wheelhouse, TORCH)
    _run(
        *pip,
        "download",
        "--quiet",
        *PIP_TARGET,
        *pip_args,
        "--dest",
        wheelhouse,
        f"{carnet}[{EXTRAS}]",
        *sorted(str(w) for w in wheelhouse.glob("carnet_client-*.whl")),
    )
    return carnet


def install_offline(wheelhouse: Path, venv: Path) -> None:
    """What the site does: a fresh venv, Carnet from the wheelhouse only (``--no-index``). This venv is
    read (its versions, its SBOM) and thrown away, so pip does not compile its bytecode: that was two
    thirds of the install's time (72 s against 23 s on a 2-vCPU Xeon) and checks nothing."""
    _run(sys.executable, "-m", "venv", venv)
    _run(
        venv / "bin" / "python",
        "-m",
        "pip",
        "install",
        "--quiet",
        "--no-compile",
        "--disable-pip-version-check",
        "--no-index",
        "--find-links",
        wheelhouse,
        TORCH,
        f"carnet[{EXTRAS}]",
        "carnet-client",
    )


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _wheels(wheelhouse: Path) -> dict[tuple[str, str], Path]:
    """(normalised name, version) -> wheel file."""
    wheels = {}
    for wheel in wheelhouse.glob("*.whl"):
        name, version = wheel.name.split("-")[:2]
        wheels[(_normalized(name), version)] = wheel
    return wheels


def write_requirements(venv: Path, wheelhouse: Path, out: Path) -> None:
    """The installed versions (``pip freeze``) of the packages that came from the wheelhouse: not the
    venv's own pip or setuptools, unless a dependency asked for them."""
    frozen = _run(venv / "bin" / "python", "-m", "pip", "freeze", "--all", "--disable-pip-version-check")
    wheels = _wheels(wheelhouse)
    pins = []
    for line in frozen.splitlines():
        name, sep, version = line.partition("==")
        if sep and (_normalized(name), version) in wheels:
            pins.append(f"{line}\n")
    out.write_text("".join(pins))


def write_sbom(venv: Path, out: Path, wheelhouse: Path, extra: list[Path], version: str) -> None:
    """``cyclonedx-py environment`` on the installed venv. Each package gets the SHA-256 of the wheel it was
    installed from, and ``extra`` files (chart, collection) are added as components with theirs."""
    env = {**os.environ, "SOURCE_DATE_EPOCH": os.environ.get("SOURCE_DATE_EPOCH", str(int(time.time())))}
    _run(
        _tool("cyclonedx-py"),
        "environment",
        "--of",
        "JSON",
        "--sv",
        "1.6",
        "--output-reproducible",
        "--pyproject",
        ROOT / "pyproject.toml",
        "-o",
        out,
        venv / "bin" / "python",
        env=env,
    )
    sbom = json.loads(out.read_text())
    wheels = _wheels(wheelhouse)
    for component in sbom.get("components", []):
        wheel = wheels.get((_normalized(component["name"]), component.get("version", "")))
        if wheel is not None:
            component["hashes"] = [{"alg": "SHA-256", "content": _sha256(wheel)}]
    for path in extra:
        sbom.setdefault("components", []).append(
            {
                "type": "file",
                "bom-ref": f"bundle-file:{path.name}",
                "name": path.name,
                "version": version,
                "hashes": [{"alg": "SHA-256", "content": _sha256(path)}],
            }
        )
    out.write_text(json.dumps(sbom, indent=2) + "\n")


def write_sha256sums(tree: Path) -> None:
    lines = []
    for path in sorted(p for p in tree.rglob("*") if p.is_file() and p.name != "SHA256SUMS"):
        lines.append(f"{_sha256(path)}  {path.relative_to(tree).as_posix()}\n")
    (tree / "SHA256SUMS").write_text("".join(lines))


def build(out: Path, pip_args: list[str], wheelhouse: Path | None = None, keep_venv: Path | None = None) -> Path:
    """Builds the tree and the archive in ``out``; returns the archive's path. ``wheelhouse``: one
    already built by ``build_wheelhouse`` from this checkout, copied instead of built again.
    ``keep_venv``: where to make the check's venv (installed from the wheelhouse alone) and keep it,
    instead of a temporary directory (the test suite runs the demo from it)."""
    version = _version()
    name = f"carnet-bundle-{version}-{PLATFORM}"
    tree = out / name
    if tree.exists():
        shutil.rmtree(tree)
    for part in ("wheelhouse", "helm", "ansible", "deploy", "docs"):
        (tree / part).mkdir(parents=True)

    t = _step("deploy/'s copies in the chart and the collection equal their sources")
    _run(sys.executable, ROOT / "scripts" / "sync-deploy-copies", "--check")
    _done(t)

    t = _step("wheelhouse: Carnet, the SDK and every dependency for CPython 3.11 on Linux x86_64")
    if wheelhouse is None:
        build_wheelhouse(tree / "wheelhouse", pip_args)
    else:
        shutil.copytree(wheelhouse, tree / "wheelhouse", dirs_exist_ok=True)
    _done(t)

    t = _step("helm: lint and package the chart")
    helm = _tool("helm")
    _run(helm, "lint", "--strict", ROOT / "helm" / "carnet")
    _run(helm, "package", ROOT / "helm" / "carnet", "--destination", tree / "helm")
    _done(t)

    t = _step("ansible: build the carnet.sovereign collection")
    collection = ROOT / "ansible" / "ansible_collections" / "carnet" / "sovereign"
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "HOME": home, "ANSIBLE_HOME": home, "ANSIBLE_LOCAL_TEMP": home}
        _run(_tool("ansible-galaxy"), "collection", "build", collection, "--output-path", tree / "ansible", env=env)
    _done(t)

    t = _step("deploy/ and docs/")
    for part in DEPLOY_PARTS:
        src = ROOT / "deploy" / part
        if src.is_dir():
            shutil.copytree(src, tree / "deploy" / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, tree / "deploy" / part)
    for doc in sorted((ROOT / "docs").glob("*.md")):
        shutil.copy2(doc, tree / "docs" / doc.name)
    for doc in DOCS:
        shutil.copy2(ROOT / doc, tree / doc)
    (tree / "INSTALL.md").write_text(INSTALL.format(version=version, name=name))
    _done(t)

    t = _step("check: install Carnet from the wheelhouse alone in a fresh venv, then read its SBOM")
    with tempfile.TemporaryDirectory() as scratch:
        venv = keep_venv or Path(scratch) / "venv"
        install_offline(tree / "wheelhouse", venv)
        _run(venv / "bin" / "carnet", "--help")
        write_requirements(venv, tree / "wheelhouse", tree / "requirements.txt")
        extra = sorted([*(tree / "helm").glob("*.tgz"), *(tree / "ansible").glob("*.tar.gz")])
        write_sbom(venv, tree / "sbom.cdx.json", tree / "wheelhouse", extra, version)
    _done(t)

    t = _step("SHA256SUMS and the archive")
    write_sha256sums(tree)
    archive = out / f"{name}.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(tree, arcname=name)
    (out / f"{name}.tar.sha256").write_text(f"{_sha256(archive)}  {archive.name}\n")
    _done(t)
    size = archive.stat().st_size / 1e6
    print(f"bundle: {archive} ({size:.0f} MB)", file=sys.stderr)
    return archive


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, default=ROOT / "dist", help="output directory (default: dist/)")
    parser.add_argument(
        "--pip-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="extra pip download argument, repeatable (e.g. --pip-arg=--index-url=URL)",
    )
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        build(args.out.resolve(), args.pip_arg)
    except BundleError as e:
        print(f"bundle: failed: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
