"""A tenant's API keys, and the reports of maintenance and backups, as the admin routes show them."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from carnet.ports import ApiKeyRecord
from carnet.services.backup.snapshots import BackupReport
from carnet.services.lifecycle.maintain import MaintainReport


class ApiKeyOut(BaseModel):
    key_id: str = Field(examples=["3f9a0c1d2e4b"])
    tenant: str
    roles: list[str]
    created_at: str
    revoked: bool
    rate_limit: str | None
    name: str | None


class NewApiKeyOut(ApiKeyOut):
    key: str = Field(description="The API key itself: shown in this answer only.")


class ApiKeysOut(BaseModel):
    items: list[ApiKeyOut]


class MaintainTenantOut(BaseModel):
    subjects: int
    held: int
    failed: int
    deleted: dict[str, int]


class MaintainOut(BaseModel):
    started_at: str
    finished_at: str | None
    dry_run: bool
    interrupted: bool
    compacted: bool
    deleted: dict[str, int]
    tenants: dict[str, MaintainTenantOut]


class BackupOut(BaseModel):
    file: str = Field(examples=["carnet-backup-20260501T020000123456Z.tar.gz"])  # in the server's backup dir
    created_at: str
    records: int
    bytes: int
    paused_seconds: float
    seconds: float


def api_key_out(r: ApiKeyRecord) -> ApiKeyOut:
    """A key as listed (the REST API and ``carnet apikey list``): never its secret or its hash."""
    return ApiKeyOut(key_id=r.key_id, tenant=r.tenant, roles=list(r.roles), created_at=r.created_at.isoformat(),
                     revoked=r.revoked, rate_limit=r.rate_limit, name=r.name)


def new_api_key_out(key: str, r: ApiKeyRecord) -> NewApiKeyOut:
    return NewApiKeyOut(**api_key_out(r).model_dump(), key=key)


def api_keys_out(records: Sequence[ApiKeyRecord]) -> ApiKeysOut:
    return ApiKeysOut(items=[api_key_out(r) for r in records])


def maintain_out(report: MaintainReport) -> MaintainOut:
    """The report's own fields (``MaintainReport.as_dict``, which the CLI prints too)."""
    return MaintainOut.model_validate(report.as_dict())


def backup_out(report: BackupReport) -> BackupOut:
    """The report's fields (``BackupReport.as_dict``), with the archive's name instead of its path: the
    answer names the archive, not where the server keeps it."""
    fields = {k: v for k, v in report.as_dict().items() if k != "path"}
    return BackupOut.model_validate({"file": report.path.name, **fields})
