"""deploy/systemd and deploy/bin: hardened units for the Ansible roles, and the secret-file wrapper.

`systemd-analyze verify` runs when the binary is present (Debian's `systemd` package) and is skipped,
saying so, when it is not.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from carnet.settings.root import _known

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
UNITS = sorted(p for p in (DEPLOY / "systemd").iterdir() if p.suffix in {".service", ".timer"})
SERVICES = [p for p in UNITS if p.suffix == ".service"]
DATA_DIRS = {"/var/lib/carnet/data", "/var/lib/carnet/keys", "/var/lib/carnet/backups"}
HARDENING = {
    "NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes",
    "PrivateDevices": "yes", "CapabilityBoundingSet": "", "AmbientCapabilities": "",
    "RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX", "User": "carnet", "Group": "carnet",
    "ProtectKernelTunables": "yes", "ProtectKernelModules": "yes", "ProtectControlGroups": "yes",
    "RestrictSUIDSGID": "yes", "LockPersonality": "yes", "UMask": "0077",
}


def _unit(path: Path, section: str | None = None) -> dict[str, dict[str, list[str]]]:
    """Sections -> key -> every value (systemd repeats keys, which configparser refuses). ``section``
    names the section of lines before any header (hardening.conf holds [Service] directives only)."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] = sections.setdefault(section, {}) if section else {}
    for line in path.read_text().splitlines():
        if not line.strip() or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            current = sections.setdefault(line.strip("[]"), {})
        else:
            key, _, value = line.partition("=")
            current.setdefault(key, []).append(value)
    return sections


def test_the_units_are_there() -> None:
    names = {p.name for p in UNITS}
    assert {"carnet-api.service", "carnet-worker@.service", "carnet-maintain.service", "carnet-maintain.timer",
            "carnet-backup.service", "carnet-backup.timer"} <= names


@pytest.mark.parametrize("path", SERVICES, ids=lambda p: p.name)
def test_services_are_hardened(path: Path) -> None:
    service = _unit(path)["Service"]
    for key, value in HARDENING.items():
        assert service.get(key) == [value], f"{path.name}: {key}"
    assert "@system-service" in service["SystemCallFilter"]
    paths = {p for value in service["ReadWritePaths"] for p in value.split()}
    assert paths == DATA_DIRS
    assert service["EnvironmentFile"] == ["/etc/carnet/carnet.env"]
    (exec_start,) = service["ExecStart"]
    assert exec_start.startswith("/opt/carnet/bin/carnet-env-from-files %d /opt/carnet/bin/")
    for credential in service.get("LoadCredential", []):
        name, _, source = credential.partition(":")
        assert _known(name) and source.startswith("/etc/carnet/credentials/"), credential


@pytest.mark.parametrize("path", SERVICES, ids=lambda p: p.name)
def test_services_apply_every_directive_of_the_hardening_source(path: Path) -> None:
    """deploy/systemd/hardening.conf is the source of the block: each service's effective [Service]
    directives (the unit is the whole configuration: no drop-in) hold every one of its values, and the
    unit sets no other value for those keys."""
    source = _unit(DEPLOY / "systemd" / "hardening.conf", section="Service")["Service"]
    service = _unit(path)["Service"]
    for key, values in source.items():
        assert service.get(key) == values, f"{path.name}: {key}={service.get(key)}, hardening.conf says {values}"
    expected = {key: [value] for key, value in HARDENING.items() if key not in {"User", "Group"}}
    assert {key: source.get(key) for key in expected} == expected, "hardening.conf lost a directive"


@pytest.mark.parametrize("path", [p for p in UNITS if p.suffix == ".timer"], ids=lambda p: p.name)
def test_timers_catch_up_and_have_their_service(path: Path) -> None:
    timer = _unit(path)["Timer"]
    assert timer["Persistent"] == ["true"] and timer["OnCalendar"]
    assert path.with_suffix(".service").exists()


def test_systemd_analyze_verify(tmp_path: Path) -> None:
    binary = shutil.which("systemd-analyze")
    if binary is None:
        pytest.skip("systemd-analyze is not installed (Debian package `systemd`): units not verified")
    system = Path("/usr/lib/systemd/system")
    if not (system / "sysinit.target").exists():
        pytest.skip("no systemd unit directory to verify against")
    # A throwaway root: systemd's own units, ours, and stand-ins for the executables.
    shutil.copytree(system, tmp_path / "usr/lib/systemd/system", symlinks=True)
    units = tmp_path / "etc/systemd/system"
    shutil.copytree(DEPLOY / "systemd", units)
    bin_dir = tmp_path / "opt/carnet/bin"
    bin_dir.mkdir(parents=True)
    for name in ("carnet", "carnet-env-from-files", "carnet-backup-snapshot"):
        (bin_dir / name).write_text("#!/bin/sh\n")
        (bin_dir / name).chmod(0o755)
    names = [p.name.replace("@.", "@1.") for p in UNITS]
    result = subprocess.run([binary, "verify", "--man=no", f"--root={tmp_path}", *names],
                            capture_output=True, text=True, timeout=30, check=False)
    # Unknown keys are only warnings (exit 0): any output at all is a finding.
    assert result.returncode == 0 and not result.stdout.strip() and not result.stderr.strip(), result.stderr


def test_env_from_files_exports_carnet_files_only(tmp_path: Path) -> None:
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "CARNET_QDRANT__API_KEY").write_text("s3cret value\n")
    (secrets / "CARNET_bad-name").write_text("x")
    (secrets / "qdrant_tls_key").write_text("not a variable")
    (secrets / "CARNET_DIR").mkdir()
    script = str(DEPLOY / "bin" / "carnet-env-from-files")
    out = subprocess.run(["sh", script, str(secrets), "env"], capture_output=True, text=True, check=True,
                         env={"PATH": "/usr/bin:/bin"}, timeout=10).stdout.splitlines()
    assert [line for line in out if line.startswith("CARNET_")] == ["CARNET_QDRANT__API_KEY=s3cret value"]
    missing = subprocess.run(["sh", script, str(tmp_path / "none"), "true"], check=False, timeout=10)
    assert missing.returncode == 0
    usage = subprocess.run(["sh", script], capture_output=True, check=False, timeout=10)
    assert usage.returncode == 64


@pytest.mark.parametrize("script", ["bin/carnet-backup-snapshot", "bin/carnet-env-from-files",
                                    "compose/postgres/init-carnet.sh"])
def test_shell_scripts_parse(script: str) -> None:
    path = DEPLOY / script
    assert path.stat().st_mode & 0o111, "executable"
    subprocess.run(["sh", "-n", str(path)], check=True, timeout=10)
