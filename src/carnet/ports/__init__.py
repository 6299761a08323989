"""Ports: what the services need from the outside world, as Protocols, one module per family.

Adapters in ``carnet.adapters`` implement them; ``carnet.bootstrap`` is the one place that chooses and
wires the adapters. Tests use fakes or the real adapters through the same ports. Every port is named here,
so ``from carnet.ports import RecordStore`` is the way in."""

from __future__ import annotations

from carnet.ports.audit import AuditLog, ErasureEntry, ErasureLedger
from carnet.ports.catalog import (
    ApiKeyRecord,
    ApiKeys,
    Catalog,
    HashKeyEntries,
    RecordHistory,
    RegisteredSubject,
    SealedMapStore,
    SubjectDirectory,
)
from carnet.ports.corrections import CorrectionStore, SealedCorrection
from carnet.ports.embeddings import Embedder, EmbedderFront, SparseEncoder
from carnet.ports.intakes import IntakeStore
from carnet.ports.keys import (
    CacheEvictions,
    KeyInvalidations,
    KeyStore,
    Kms,
    StoredKey,
    SubjectHasher,
    SubjectKeys,
    WrappedKey,
)
from carnet.ports.llm import ContradictionJudge, Extractor
from carnet.ports.pii import PiiDetector, PseudonymMaps, SubjectIdSealer
from carnet.ports.procedures import TeamProcedures
from carnet.ports.records import RecordStore
from carnet.ports.runtime import Clock, SubjectLock
from carnet.ports.vectors import (
    AccessUpdate,
    Candidate,
    HybridHits,
    IndexedMemory,
    RecordFilter,
    SparseVector,
    Vector,
    VectorIndex,
)

__all__ = [
    "AccessUpdate",
    "ApiKeyRecord",
    "ApiKeys",
    "AuditLog",
    "CacheEvictions",
    "Candidate",
    "Catalog",
    "Clock",
    "ContradictionJudge",
    "CorrectionStore",
    "Embedder", "EmbedderFront",
    "ErasureEntry",
    "ErasureLedger",
    "Extractor",
    "HashKeyEntries",
    "HybridHits",
    "IndexedMemory",
    "IntakeStore",
    "KeyInvalidations",
    "KeyStore",
    "Kms",
    "PiiDetector",
    "PseudonymMaps",
    "RecordFilter",
    "RecordHistory",
    "RecordStore",
    "RegisteredSubject",
    "SealedCorrection",
    "SealedMapStore",
    "SparseEncoder",
    "SparseVector",
    "StoredKey",
    "SubjectDirectory",
    "SubjectHasher",
    "SubjectIdSealer",
    "SubjectKeys",
    "SubjectLock",
    "TeamProcedures",
    "Vector",
    "VectorIndex",
    "WrappedKey",
]
