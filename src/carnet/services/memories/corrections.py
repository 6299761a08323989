"""People's corrections kept as labels (issue 47): the keeper a restore hands its pair to, and the
reader ``carnet judge train --corrections`` learns from.

Keeping is opt-in per tenant (``CARNET_KEEP_CORRECTIONS``, default off: docs/configuration.md). A kept
pair is pseudonymised (the texts are ``pseudo_text``; the person's reason goes through the subject's
pseudonym map first), sealed under the subject's data key (``crypto.correction_sealer``) and stored in
the control plane beside the subject's history, so erasing the subject deletes it (and its key).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Protocol

import structlog

from carnet.crypto.errors import CryptoError
from carnet.domain.corrections import CorrectionPair
from carnet.domain.records import Scope
from carnet.ports import CorrectionStore

log = structlog.get_logger(__name__)

EVERY_TENANT = "*"


class PairSealer(Protocol):
    def seal(self, scope: Scope, pair: CorrectionPair) -> bytes: ...

    def open(self, scope: Scope, correction_id: str, sealed: bytes) -> CorrectionPair: ...


@dataclass(frozen=True, slots=True)
class CorrectionKeeper:
    """``tenants``: ``{tenant or "*": keep}``; a tenant without an entry follows ``"*"``, and without
    that keeps nothing."""

    store: CorrectionStore
    sealer: PairSealer
    tenants: Mapping[str, bool] = field(default_factory=dict)

    def keeps(self, tenant: str) -> bool:
        return bool(self.tenants.get(tenant, self.tenants.get(EVERY_TENANT, False)))

    def prepared(self, scope: Scope, pair: CorrectionPair) -> Callable[[], None]:
        """The pair sealed now, before the caller writes anything (a key store that refuses changes
        nothing); storing it is the function returned, for the caller to run with its other writes."""
        sealed = self.sealer.seal(scope, pair)
        return lambda: self.store.add_correction(scope, correction_id=pair.id, at=pair.corrected_at, sealed=sealed)


def corrections_for(store: CorrectionStore, sealer: PairSealer, tenant: str) -> Iterator[CorrectionPair]:
    """A tenant's corrections, opened, oldest first: pseudonymised pairs labelled ``not_superseded``.
    Whatever the tenant's setting is now (turning it off stops keeping new ones; the kept ones go with
    their subjects). A row that does not open (its key destroyed, the blob altered) is left out and
    counted in a log line, never named."""
    skipped = 0
    for row in store.corrections(tenant):
        try:
            yield sealer.open(row.scope, row.id, row.sealed)
        except CryptoError:
            skipped += 1
    if skipped:
        log.warning("corrections_unreadable", tenant=tenant, count=skipped)
