"""The erasure receipt and a subject's retention status, as the service reports them (``as_dict``,
which the CLI prints too)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from carnet.domain.retention import SubjectRetention
from carnet.services.rights.erase import ErasureReceipt


class ReceiptOut(BaseModel):
    tenant: str
    subject_hash: str
    at: str
    records_deleted: int
    catalog_rows_deleted: int
    data_key_destroyed: bool
    verified: dict[str, bool]
    complete: bool
    residue: list[str] = Field(default_factory=list, description=(
        "What erasure could not remove: record ids still found, or `data_key` if the key store refused."))
    unreadable_deleted: int = Field(0, description="Records deleted by id although they could not be decoded.")
    procedures_deleted: int = Field(0, description=(
        "Team procedures read from the member's calls, deleted with the member whatever their status."))


class RetentionOut(BaseModel):
    legal_hold: bool
    hold_since: str | None
    hold_reference: str | None
    relationship_end: str | None


def receipt_out(receipt: ErasureReceipt) -> ReceiptOut:
    return ReceiptOut.model_validate(receipt.as_dict())


def retention_out(status: SubjectRetention) -> RetentionOut:
    return RetentionOut.model_validate(status.as_dict())
