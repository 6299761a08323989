"""What each use case needs of ``Deps``: one Protocol per use-case module, made of one-field Protocols
(``HasIndex``, ``HasClock``…), so that a use case declares, and mypy checks, exactly the dependencies it
reads. ``Deps`` (built once by the wiring) satisfies every one; a test may pass anything narrower that does."""

from __future__ import annotations

from typing import Protocol

from carnet.domain.reconcile.decide import PairJudge, ReconcileThresholds
from carnet.domain.retention import DecayRule, RetentionPolicy
from carnet.domain.scoring import CosineScale, Weights
from carnet.ports import (
    Catalog,
    Clock,
    CorrectionStore,
    ErasureLedger,
    IntakeStore,
    RecordHistory,
    RecordStore,
    SparseEncoder,
    SubjectDirectory,
    SubjectKeys,
    SubjectLock,
)
from carnet.services.deps import AssembleDefaults, Limits
from carnet.services.lifecycle.unreadable import UnreadableTally
from carnet.services.memories.access import AccessRecorder
from carnet.services.memories.query_cache import CachedEmbedder
from carnet.services.memories.special import SpecialPolicy
from carnet.services.pii import Pii
from carnet.services.scope import HasHasher
from carnet.services.subjects import SubjectRegistry


class HasAccess(Protocol):
    @property
    def access(self) -> AccessRecorder: ...


class HasAssemble(Protocol):
    @property
    def assemble(self) -> AssembleDefaults: ...


class HasCandidates(Protocol):
    @property
    def candidates(self) -> int: ...


class HasCatalog(Protocol):
    @property
    def catalog(self) -> Catalog: ...


class HasRecordHistory(Protocol):
    @property
    def catalog(self) -> RecordHistory: ...


class HasSubjectDirectory(Protocol):
    @property
    def catalog(self) -> SubjectDirectory: ...


class ErasableDirectory(SubjectDirectory, CorrectionStore, Protocol):
    """The subject directory as erasure checks it: its corrections must be gone too."""


class HasErasableDirectory(Protocol):
    @property
    def catalog(self) -> ErasableDirectory: ...


class HasClock(Protocol):
    @property
    def clock(self) -> Clock: ...


class HasDecay(Protocol):
    @property
    def decay(self) -> DecayRule: ...


class HasEmbedDates(Protocol):
    @property
    def embed_dates(self) -> bool: ...


class HasEmbedder(Protocol):
    @property
    def embedder(self) -> CachedEmbedder: ...


class HasIndex(Protocol):
    @property
    def index(self) -> RecordStore: ...


class HasIntakes(Protocol):
    @property
    def intakes(self) -> IntakeStore: ...


class HasKeys(Protocol):
    @property
    def keys(self) -> SubjectKeys: ...


class HasLedger(Protocol):
    @property
    def ledger(self) -> ErasureLedger: ...


class HasLimits(Protocol):
    @property
    def limits(self) -> Limits: ...


class HasLocale(Protocol):
    @property
    def locale(self) -> str: ...


class HasLocks(Protocol):
    @property
    def locks(self) -> SubjectLock: ...


class HasPii(Protocol):
    @property
    def pii(self) -> Pii: ...


class HasRetention(Protocol):
    @property
    def retention(self) -> RetentionPolicy: ...


class HasScale(Protocol):
    @property
    def scale(self) -> CosineScale: ...


class HasSearchMinRelevance(Protocol):
    @property
    def search_min_relevance(self) -> float: ...


class HasSparse(Protocol):
    @property
    def sparse(self) -> SparseEncoder: ...


class HasSpecial(Protocol):
    @property
    def special(self) -> SpecialPolicy: ...


class HasSubjects(Protocol):
    @property
    def subjects(self) -> SubjectRegistry: ...


class HasThresholds(Protocol):
    @property
    def thresholds(self) -> ReconcileThresholds: ...


class HasSupersession(Protocol):
    @property
    def supersession(self) -> PairJudge: ...


class HasUnreadable(Protocol):
    @property
    def unreadable(self) -> UnreadableTally: ...


class HasWeights(Protocol):
    @property
    def weights(self) -> Weights: ...


class RetentionNeeds(HasSubjectDirectory, HasClock, HasHasher, HasLocks, HasSubjects, Protocol):
    """What legal holds and relationship ends reads."""


class ExportNeeds(HasRecordHistory, HasHasher, HasIndex, HasUnreadable, Protocol):
    """What a subject's export reads."""


class ReadsNeeds(HasRecordHistory, HasHasher, HasIndex, HasPii, HasUnreadable, Protocol):
    """What listing, reading and a record's history reads."""


class ProfileNeeds(HasIndex, Protocol):
    """What assemble's profile tier reads."""


class ReembedNeeds(HasSubjectDirectory, HasEmbedDates, HasEmbedder, HasIndex, HasLocale, HasSparse, Protocol):
    """What re-embedding every record reads."""


class QueueNeeds(HasClock, HasHasher, HasLimits, HasLocks, HasSubjects, Protocol):
    """What queueing messages reads."""


class RecallNeeds(
    HasAccess, HasCandidates, HasClock, HasEmbedder, HasHasher, HasIndex, HasLimits, HasLocale, HasPii, HasScale,
    HasSearchMinRelevance, HasSparse, HasUnreadable, HasWeights, Protocol
):
    """What search reads."""


class AssembleNeeds(RecallNeeds, ProfileNeeds, HasAssemble, Protocol):
    """What assemble reads."""


class RememberNeeds(
    HasRecordHistory, HasClock, HasEmbedDates, HasEmbedder, HasHasher, HasIndex, HasLimits, HasLocale, HasLocks,
    HasPii, HasRetention, HasSparse, HasSpecial, HasSubjects, HasThresholds, HasSupersession, Protocol
):
    """What remember reads."""


class JudgeNeeds(RememberNeeds, Protocol):
    """What the LLM's contradiction judgment reads."""


class RectifyNeeds(
    HasRecordHistory, HasClock, HasEmbedDates, HasEmbedder, HasHasher, HasIndex, HasLimits, HasLocale, HasLocks,
    HasPii, HasRetention, HasSparse, HasSpecial, HasUnreadable, Protocol
):
    """What rectification and deletion of one record reads."""


class RestoreNeeds(
    HasRecordHistory, HasClock, HasEmbedder, HasHasher, HasIndex, HasLocks, HasPii, HasUnreadable, Protocol
):
    """What restoring a superseded record reads."""


class EraseNeeds(
    HasErasableDirectory, HasClock, HasEmbedder, HasHasher, HasIndex, HasIntakes, HasKeys, HasLedger, HasLocks,
    HasPii, HasSubjects, Protocol
):
    """What a subject's erasure reads."""


class MaintainNeeds(
    HasCatalog, HasClock, HasDecay, HasEmbedder, HasIndex, HasLocks, HasRetention, HasUnreadable, Protocol
):
    """What retention, decay and compaction reads."""
