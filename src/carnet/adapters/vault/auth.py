"""Logging in to Vault/OpenBao (token, AppRole, Kubernetes) and the least-privilege policy Carnet needs.

Used by :mod:`carnet.adapters.kms.vault_transit`; secrets are hidden from ``repr``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hvac

from carnet.errors import KmsDenied


@dataclass(frozen=True, slots=True)
class TokenAuth:
    """A Vault token given to us (renewed or replaced outside Carnet)."""

    token: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class AppRoleAuth:
    """``POST /auth/{mount}/login`` with a role id and secret id."""

    role_id: str
    secret_id: str = field(repr=False)
    mount: str = "approle"


@dataclass(frozen=True, slots=True)
class KubernetesAuth:
    """``POST /auth/{mount}/login`` with the pod's service-account JWT (re-read at every login:
    projected tokens rotate)."""

    role: str
    jwt_path: Path = Path("/var/run/secrets/kubernetes.io/serviceaccount/token")
    mount: str = "kubernetes"


Auth = TokenAuth | AppRoleAuth | KubernetesAuth


def transit_policy(*, mount: str = "transit", key_template: str = "carnet-{tenant}", admin: bool = False) -> str:
    """The least-privilege Vault policy (HCL) for Carnet's tenant keys, and nothing else.

    The runtime policy generates and opens data keys and reads key metadata; ``admin`` adds
    creating keys, rotating, rewrapping, raising ``min_decryption_version`` and deleting a tenant's
    key (the CLI's ``carnet keys`` and ``carnet tenant shred`` commands).
    """
    if not key_template.endswith("{tenant}") or key_template.count("{tenant}") != 1:
        raise ValueError("a Vault policy glob needs {tenant} once, at the end of the key template")
    glob = key_template.removesuffix("{tenant}") + "*"
    rules = {
        f"{mount}/keys/{glob}": ["create", "read", "update", "delete"] if admin else ["read"],
        f"{mount}/datakey/plaintext/{glob}": ["update"],
        f"{mount}/decrypt/{glob}": ["update"],
        "auth/token/lookup-self": ["read"],  # check(), even with token_no_default_policy
    }
    if admin:
        rules[f"{mount}/keys/{glob}/rotate"] = ["update"]
        rules[f"{mount}/keys/{glob}/config"] = ["update"]
        rules[f"{mount}/rewrap/{glob}"] = ["update"]
    return "\n".join(_stanza(path, caps) for path, caps in rules.items()) + "\n"


def key_store_policy(*, mount: str = "secret", prefix: str = "carnet/data-keys") -> str:
    """The Vault policy (HCL) for the KV v2 key store: read, create and compare-and-swap entries,
    list a tenant's entries (rewrap), and destroy an entry with all its versions (erasure: the
    runtime serves GDPR erasure requests, so it needs that; nothing else under the mount)."""
    mount, prefix = mount.strip("/"), prefix.strip("/")
    rules = {
        f"{mount}/data/{prefix}/*": ["create", "read", "update"],
        f"{mount}/metadata/{prefix}/*": ["read", "update", "delete", "list"],
    }
    return "\n".join(_stanza(path, caps) for path, caps in rules.items()) + "\n"


def _stanza(path: str, capabilities: list[str]) -> str:
    quoted = ", ".join(f'"{c}"' for c in capabilities)
    return f'path "{path}" {{\n  capabilities = [{quoted}]\n}}'


def login_with(auth: AppRoleAuth | KubernetesAuth) -> Callable[[hvac.Client], float]:
    """``POST /auth/{mount}/login`` (AppRole or Kubernetes); returns the token's TTL."""
    if isinstance(auth, AppRoleAuth):
        approle = auth

        def login_approle(client: hvac.Client) -> float:
            return _lease(
                client.auth.approle.login(approle.role_id, secret_id=approle.secret_id, mount_point=approle.mount)
            )

        return login_approle
    kubernetes = auth

    def login_kubernetes(client: hvac.Client) -> float:
        jwt = kubernetes.jwt_path.read_text(encoding="ascii").strip()
        return _lease(client.auth.kubernetes.login(kubernetes.role, jwt, mount_point=kubernetes.mount))

    return login_kubernetes


def _lease(response: Any) -> float:
    auth = response.get("auth") if isinstance(response, dict) else None
    if not isinstance(auth, dict):
        raise KmsDenied("KMS login answered without a token")
    ttl = auth.get("lease_duration")
    return float(ttl) if isinstance(ttl, int | float) else 0.0
