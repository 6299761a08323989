"""A tenant's administration through the door: its API keys (role ``admin``) and its audit trail
(``dpo`` or ``admin``).

It needs only the catalog, the key pepper and the audit trail, not the vector store, so
``carnet apikey`` runs it beside a running server, with a local ``operator`` principal, exactly as
``/api/v1/admin/apikeys`` runs it with the caller's key. An admin acts on its own tenant only.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from carnet.domain.audit import AuditEntry, Verdict
from carnet.ports import ApiKeyRecord, ApiKeys
from carnet.services import apikeys
from carnet.services.apikeys import Principal
from carnet.services.door import Door
from carnet.services.roles import ADMIN, DPO


class Admin:
    def __init__(self, door: Door, catalog: ApiKeys, pepper: bytes) -> None:
        self.door = door
        self.catalog = catalog
        self._pepper = pepper

    def create_key(self, who: Principal, *, roles: Sequence[str], rate_limit: str | None = None,
                   name: str | None = None) -> tuple[str, ApiKeyRecord]:
        """A new key of the caller's tenant; the key itself is returned once and never stored. It never
        widens what its creator may do: ``dpo`` and ``supervisor`` only from a holder (``apikeys.grantable``)."""

        def check() -> None:
            apikeys.check_key_request(tenant=who.tenant, roles=roles, rate_limit=rate_limit, name=name)
            apikeys.check_grant(creator=who.roles, roles=roles)

        with self.door.write(who, "apikey.create", (ADMIN,), detail={"roles": ",".join(roles)}, check=check):
            return apikeys.create_key(self.catalog, self._pepper, tenant=who.tenant, roles=roles,
                                      rate_limit=rate_limit, name=name)

    def revoke_key(self, who: Principal, *, key_id: str) -> None:
        """Revoke at once; a key of another tenant is not found, like an unknown one."""
        with self.door.write(who, "apikey.revoke", (ADMIN,), targets=(key_id,),
                             check=lambda: apikeys.check_key_exists(self.catalog, key_id=key_id, tenant=who.tenant)):
            apikeys.revoke_key(self.catalog, key_id=key_id, tenant=who.tenant)

    def list_keys(self, who: Principal) -> list[ApiKeyRecord]:
        self.door.allow(who, "apikey.list", (ADMIN,))
        return self.catalog.api_keys(who.tenant)

    def audit_entries(self, who: Principal, *, after_seq: int = 0) -> Iterator[AuditEntry]:
        """The tenant's entries after ``after_seq``, in chain order; the reading is itself recorded."""
        trail = self.door.audit

        def entries() -> Iterator[AuditEntry]:
            trail.flush()
            return trail.log.entries(who.tenant, after_seq=after_seq)

        return self.door.read(who, "audit.read", (DPO, ADMIN), entries, seen=lambda _: (),
                              detail=lambda _: {"after_seq": after_seq}, at_once=True)

    def audit_verify(self, who: Principal) -> Verdict:
        self.door.allow(who, "audit.verify", (DPO, ADMIN))
        return self.door.audit.verify(who.tenant)
