"""Applying the erasure ledger again, after a restore (GDPR art. 17 survives backups).

A backup taken before an erasure still holds the subject's sealed records, its catalog rows, its
registry row, and the team procedures read from its calls (their ``origin``: deleted again too).
Its data key is gone, so nothing opens, but the records would come back into listings and counts,
and the registry would name the subject again. So every erasure recorded at or
after the backup's freeze time is applied again to the restored stores: records deleted, catalog
rows deleted, and the data key destroyed if the key store still has one (a key store restored from
its own backup, or an erasure that crashed before its last step).

Only entries from the backup's time on are applied: an erasure older than the backup is already in
it, and the same subject may have been written to again since (a new contract, a new key), which
must stay. Entries compare by wall-clock time; the server writes both (its clock).

Backend-agnostic: it works on the ports, so it serves the embedded restore and, after a Qdrant
snapshot and a catalog dump are restored by hand, ``carnet backup reapply-erasures --since``.
Pass the raw vector index, not the sealing one: an erased subject's records cannot be opened.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from carnet.domain.records import Scope
from carnet.ports import (
    ErasureEntry,
    ErasureLedger,
    IntakeStore,
    RecordFilter,
    SubjectDirectory,
    SubjectKeys,
    TeamProcedures,
    VectorIndex,
)
from carnet.services.rights.erase import delete_stored_records


@dataclass(frozen=True, slots=True)
class ReerasureReport:
    """Counts only: which subjects they were is not the report's business."""

    entries: int  # in the ledger
    applied: int  # made at or after the backup's time
    subjects_erased: int  # scopes that still had records, catalog rows or a data key
    records_deleted: int
    catalog_rows_deleted: int
    data_keys_destroyed: int
    verified: bool  # every applied scope counts zero records and has no data key
    procedures_deleted: int = 0  # team procedures read from the erased members' calls

    def as_dict(self) -> dict[str, object]:
        return {"entries": self.entries, "applied": self.applied, "subjects_erased": self.subjects_erased,
                "records_deleted": self.records_deleted, "catalog_rows_deleted": self.catalog_rows_deleted,
                "data_keys_destroyed": self.data_keys_destroyed, "verified": self.verified,
                "procedures_deleted": self.procedures_deleted}


def reapply_erasures(*, ledger: ErasureLedger, index: VectorIndex, catalog: SubjectDirectory, keys: SubjectKeys,
                     intakes: IntakeStore, since: datetime | None,
                     procedures: TeamProcedures | None = None) -> ReerasureReport:
    """Every ledger entry made at or after ``since`` (every entry when ``None``) applied to the stores."""
    entries = ledger.entries()
    due = [e for e in entries if since is None or e.at >= since]
    scopes = list(dict.fromkeys(s for e in due for s in _scopes(e, catalog)))
    erased = records = rows = destroyed = derived = 0
    verified = True
    every = RecordFilter(statuses=None)
    for scope in scopes:
        k = keys.shred(scope.tenant, scope.subject)  # the key first, as erasure does
        r = delete_stored_records(index, scope).records
        c = catalog.erase_subject(scope) + intakes.forget_subject(scope.tenant, scope.subject)
        d = len(procedures.forget_origin(scope.tenant, scope.subject)) if procedures is not None else 0
        erased += bool(r or c or k or d)
        derived += d
        records, rows, destroyed = records + r, rows + c, destroyed + k
        verified = verified and index.count(scope, where=every) == 0 and not keys.exists(scope.tenant, scope.subject)
    return ReerasureReport(len(entries), len(due), erased, records, rows, destroyed, verified, derived)


def _scopes(entry: ErasureEntry, catalog: SubjectDirectory) -> list[Scope]:
    """The subject of the entry, or every subject the restored registry knows for a shredded tenant."""
    if entry.subject is not None:
        return [Scope(entry.tenant, entry.subject)]
    return [s.scope for s in catalog.registered_subjects(entry.tenant)]
