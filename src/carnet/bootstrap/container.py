"""What a built process holds: its settings, dependencies, services and clients, and how it closes them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import structlog

from carnet.crypto.keyring import Keyring
from carnet.metrics import Metrics
from carnet.ports import (
    Catalog,
    KeyInvalidations,
    Kms,
)
from carnet.services.audit import AuditTrail
from carnet.services.deps import Deps
from carnet.services.facade import Facade
from carnet.services.intake.queue import IntakeQueue
from carnet.services.intake.worker import WorkerPool
from carnet.services.ratelimit import RateLimiter
from carnet.services.refusals import RefusalTally
from carnet.settings.root import (
    Settings,
)

log = structlog.get_logger(__name__)


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


@dataclass(slots=True)
class ControlPlane:
    """What ``apikey create`` needs: the catalog and the key pepper, not the vector store."""

    catalog: Catalog
    pepper: bytes


@dataclass(slots=True)
class Container:
    settings: Settings
    deps: Deps
    pepper: bytes
    metrics: Metrics
    kms: Kms
    keyring: Keyring
    audit: AuditTrail
    facade: Facade
    limiter: RateLimiter
    queue: IntakeQueue
    refusals: RefusalTally  # unauthenticated requests, audited per source and window (carnet.entrypoints.http.gate)
    invalidations: KeyInvalidations  # shreds told to, and heard from, the other processes
    workers: WorkerPool | None = None  # started by `carnet serve` / `carnet worker` (start_workers)
    closing: list[Callable[[], None]] = field(default_factory=list)  # clients to close last (the LLM judge's)
    # Readiness checks of optional dependencies, by name (the embedding server's): /readyz runs them too.
    probes: dict[str, Callable[[], None]] = field(default_factory=dict)

    def close(self) -> None:
        if self.workers is not None:
            self.workers.stop()
        self.invalidations.close()
        for close in self.closing:
            close()
        self.deps.access.stop()
        self.refusals.close()
        self.audit.stop()
        self.audit.log.close()
        self.deps.index.close()
        self.deps.intakes.close()
        self.deps.catalog.close()
        self.facade.procedures.close()
        self.deps.locks.close()
        self.deps.ledger.close()
