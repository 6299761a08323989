"""The carnet role's molecule scenario (ansible/.../extensions/molecule/carnet): converge on this host
with the delegated driver, idempotence, check mode, verify (systemd-analyze on the installed units, then
the installed entrypoint answering /readyz over HTTPS), cleanup.

Carnet is installed from the session's wheelhouse, in production mode against a real OpenBao dev server
(AppRole bound to the openbao role's runtime policy), everything under a temporary directory but the
service user ``carnet-molecule``, which the scenario's cleanup removes with the directory's contents.
"""

from __future__ import annotations

import hashlib
import secrets
import shutil
import tempfile
from pathlib import Path

import pytest

from carnet.entrypoints.http.server import free_port
from tests.support.molecule import COLLECTION, ansible_environment, molecule
from tests.support.openbao import Bao, transit_server
from tests.support.tls import make_tls

SCENARIO = "carnet"
_TIMEOUT_S = 600


def _approle(bao: Bao) -> tuple[str, str]:
    """What the openbao role and an operator do: the runtime policy, an AppRole bound to it only, a secret id."""
    client = bao.root()
    policy = (COLLECTION / "roles" / "openbao" / "files" / "carnet-runtime.hcl").read_text()
    client.sys.create_or_update_policy("carnet-runtime", policy)
    client.sys.enable_auth_method("approle")
    client.auth.approle.create_or_update_approle(
        "carnet", token_policies=["carnet-runtime"], token_no_default_policy=True, token_ttl="1h"
    )
    role_id = client.auth.approle.read_role_id("carnet")["data"]["role_id"]
    secret_id = client.auth.approle.generate_secret_id("carnet")["data"]["secret_id"]
    return str(role_id), str(secret_id)


def _environment(tmp_path: Path, root: Path, wheelhouse: Path, bao: Bao) -> dict[str, str]:
    tls = make_tls(tmp_path / "tls")
    bundle = tmp_path / "tls" / "site-ca.pem"  # the site CA: the API's issuer and OpenBao's
    bundle.write_text(tls.ca_cert.read_text() + bao.ca_cert.read_text())
    wheel = next(wheelhouse.glob("carnet-*-py3-none-any.whl"))
    role_id, secret_id = _approle(bao)
    return {
        **ansible_environment(tmp_path),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        # The role's pip (a site's: its default compiles the bytecode) told not to compile it here: 45 of
        # the 76 CPU seconds of installing ~110 wheels on an AVX2-only AMD EPYC, for files this venv,
        # thrown away after one start, reads once. ``PIP_COMPILE=0`` is pip's own setting for --no-compile.
        "PIP_COMPILE": "0",
        "MOLECULE_CARNET_ROOT": str(root),
        "MOLECULE_CARNET_PORT": str(free_port()),
        "MOLECULE_CARNET_WHEEL": str(wheel),
        "MOLECULE_CARNET_WHEEL_SHA256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
        "MOLECULE_CARNET_WHEELHOUSE": str(wheelhouse),
        "MOLECULE_CARNET_CA": str(bundle),
        "MOLECULE_CARNET_CERT": str(tls.cert),
        "MOLECULE_CARNET_KEY": str(tls.key),
        "MOLECULE_CARNET_PEPPER": secrets.token_urlsafe(32),
        "MOLECULE_CARNET_VAULT_URL": bao.url,
        "MOLECULE_CARNET_VAULT_ROLE_ID": role_id,
        "MOLECULE_CARNET_VAULT_SECRET_ID": secret_id,
    }


@pytest.mark.slow
@pytest.mark.timeout(_TIMEOUT_S)  # converge installs ~110 wheels; idempotence and check run the role again
def test_molecule_carnet_scenario(carnet_wheelhouse: Path, tmp_path: Path) -> None:
    # Not under tmp_path: pytest's directories are root's only (0700), and the service user must reach
    # the venv and its state directory as it would under /opt and /var/lib.
    root = Path(tempfile.mkdtemp(prefix="carnet-molecule-"))
    root.chmod(0o755)
    try:
        with transit_server(tmp_path / "bao") as bao:
            env = _environment(tmp_path, root, carnet_wheelhouse, bao)
            proc = molecule("test", SCENARIO, env, _TIMEOUT_S)
        assert proc.returncode == 0, f"molecule test exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        assert not any(root.iterdir()), "the scenario's cleanup left files behind"
    finally:
        shutil.rmtree(root, ignore_errors=True)
