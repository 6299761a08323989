"""The openbao role's molecule scenario (ansible/.../extensions/molecule/openbao): converge against a real
OpenBao dev server over https, idempotence, check mode, verify (the keys, the policies, the AppRole, the
audit device, then an AppRole login whose token may do what Carnet does and nothing else).

The server is in memory and thrown away after. It starts as a site's would be when the role runs: no
Transit mount and no KV mount (dev mode mounts KV v2 at ``secret/``: it is removed, so the role mounts
it), and the role runs with an administrator's token, not the root token. The file audit device is
either declared in the server's configuration (OpenBao 2.x refuses to create one through the API: the
role finds it), or left to the role on a server that allows it through the API, as Vault does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.molecule import ansible_environment, molecule
from tests.support.openbao import Bao

SCENARIO = "openbao"
_TIMEOUT_S = 300

# What the role needs and no more (sudo: sys/audit and enabling an auth method require it); verify also
# generates a secret id, revokes the token it logged in with and destroys the secret id.
_PROVISIONER_POLICY = """
path "sys/mounts" { capabilities = ["read"] }
path "sys/mounts/*" { capabilities = ["create", "update"] }
path "sys/auth" { capabilities = ["read"] }
path "sys/auth/approle" { capabilities = ["create", "update", "sudo"] }
path "sys/policies/acl/carnet-*" { capabilities = ["create", "read", "update"] }
path "sys/audit" { capabilities = ["read", "sudo"] }
path "sys/audit/*" { capabilities = ["create", "update", "sudo"] }
path "transit/keys/carnet-*" { capabilities = ["create", "read", "update"] }
path "auth/approle/role/carnet" { capabilities = ["create", "read", "update"] }
path "auth/approle/role/carnet/*" { capabilities = ["create", "read", "update"] }
path "auth/token/revoke-accessor" { capabilities = ["update"] }
"""


def _server_config(workdir: Path, audit: str, audit_file: Path) -> Path:
    """``declared``: the file audit device in the configuration, as a site declares it; ``api``: none,
    and the server lets the role create it through the API."""
    config = workdir / "extra.hcl"
    if audit == "declared":
        config.write_text(f'audit "file" "file" {{\n  options {{\n    file_path = "{audit_file}"\n  }}\n}}\n')
    else:
        config.write_text("unsafe_allow_api_audit_creation = true\n")
    return config


def _provisioner_token(bao: Bao) -> str:
    client = bao.root()
    client.sys.disable_secrets_engine("secret")
    client.sys.create_or_update_policy("carnet-provisioner", _PROVISIONER_POLICY)
    created = client.auth.token.create(policies=["carnet-provisioner"], no_default_policy=True, ttl="15m")
    return str(created["auth"]["client_token"])


def _environment(tmp_path: Path, bao: Bao, audit_file: Path) -> dict[str, str]:
    return {
        **ansible_environment(tmp_path),
        "MOLECULE_OPENBAO_ADDR": bao.url,
        "MOLECULE_OPENBAO_CA": str(bao.ca_cert),
        "MOLECULE_OPENBAO_TOKEN": _provisioner_token(bao),
        "MOLECULE_OPENBAO_AUDIT_FILE": str(audit_file),
    }


@pytest.mark.slow
@pytest.mark.parametrize("audit", ["declared", "api"])
def test_molecule_openbao_scenario(audit: str, tmp_path: Path) -> None:
    workdir = tmp_path / "bao"
    workdir.mkdir()
    audit_file = tmp_path / "audit" / "audit.log"
    audit_file.parent.mkdir()
    bao = Bao(workdir, config=_server_config(workdir, audit, audit_file))
    bao.start()
    try:
        proc = molecule("test", SCENARIO, _environment(tmp_path, bao, audit_file), _TIMEOUT_S)
    finally:
        bao.stop()
    assert proc.returncode == 0, f"molecule test exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
