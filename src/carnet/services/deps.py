"""The dependencies of the use cases, built once by ``carnet.bootstrap.wiring``. Each use case declares
what it reads of them as a Protocol in ``carnet.services.needs``, which ``Deps`` satisfies."""

from __future__ import annotations

from dataclasses import dataclass, field

from carnet.domain.budget import TierBudget
from carnet.domain.reconcile.decide import PairJudge, ReconcileThresholds
from carnet.domain.retention import DecayRule, RetentionPolicy
from carnet.domain.scoring import CosineScale, Weights
from carnet.ports import (
    Catalog,
    Clock,
    ErasureLedger,
    IntakeStore,
    RecordStore,
    SparseEncoder,
    SubjectHasher,
    SubjectKeys,
    SubjectLock,
)
from carnet.services.lifecycle.unreadable import UnreadableTally
from carnet.services.memories.access import AccessRecorder
from carnet.services.memories.query_cache import CachedEmbedder
from carnet.services.memories.special import SpecialPolicy
from carnet.services.pii import Pii
from carnet.services.subjects import SubjectRegistry


@dataclass(frozen=True, slots=True)
class AssembleDefaults:
    memories: TierBudget = field(default_factory=lambda: TierBudget(15, 1200))
    episodes: TierBudget = field(default_factory=lambda: TierBudget(3, 600))
    procedures: TierBudget = field(default_factory=lambda: TierBudget(3, 400))
    min_relevance: float = 0.0
    profile: TierBudget = field(default_factory=lambda: TierBudget(8, 300))


@dataclass(frozen=True, slots=True)
class Limits:
    max_text_chars: int = 8000
    max_batch: int = 500
    max_query_chars: int = 2000
    max_k: int = 100


@dataclass(frozen=True, slots=True)
class Deps:
    index: RecordStore  # sealed records (``SealedIndex``): search, then ``reveal`` what is kept
    embedder: CachedEmbedder
    sparse: SparseEncoder
    hasher: SubjectHasher
    catalog: Catalog
    clock: Clock
    locks: SubjectLock  # in-process, or PostgreSQL advisory locks across processes
    access: AccessRecorder
    thresholds: ReconcileThresholds
    supersession: PairJudge  # the learned judge (``domain/reconcile/judge_model``), loaded by the wiring
    scale: CosineScale
    keys: SubjectKeys
    weights: Weights
    subjects: SubjectRegistry
    pii: Pii
    ledger: ErasureLedger  # every erasure, kept outside the data and its backups (see services/rights/erase.py)
    intakes: IntakeStore  # queued messages (sealed), deleted with their subject
    special: SpecialPolicy = field(default_factory=SpecialPolicy)
    assemble: AssembleDefaults = field(default_factory=AssembleDefaults)
    limits: Limits = field(default_factory=Limits)
    search_min_relevance: float = 0.0
    candidates: int = 60
    locale: str = "fr"
    embed_dates: bool = True
    retention: RetentionPolicy = field(default_factory=RetentionPolicy)  # classes per tenant
    decay: DecayRule = field(default_factory=DecayRule)
    unreadable: UnreadableTally = field(default_factory=UnreadableTally)  # records reads left out, for /metrics
