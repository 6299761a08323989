"""Ports: what the services need from the outside world, as Protocols.

Adapters in ``carnet.adapters`` implement them; ``carnet.bootstrap`` is the one place that
chooses and wires the adapters. Tests use fakes or the real adapters through the same ports.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

import numpy as np
import numpy.typing as npt

from carnet.domain.audit import AuditEntry, AuditEvent
from carnet.domain.extraction import Extraction
from carnet.domain.intake import Intake, Message, QueueStats
from carnet.domain.pii.pseudonyms import PseudonymMap
from carnet.domain.pii.spans import Span
from carnet.domain.procedures import ProcedureStatus, TeamProcedure
from carnet.domain.records import HistoryEntry, Kind, Memory, Scope, Status
from carnet.domain.retention import SubjectRetention
from carnet.domain.unreadable import Skipped

Vector = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class SparseVector:
    indices: list[int]
    values: list[float]


@dataclass(frozen=True, slots=True)
class IndexedMemory:
    """A record with the vectors computed from its ``pseudo_text`` (never from ``text``)."""

    memory: Memory
    dense: Vector
    sparse: SparseVector


@dataclass(frozen=True, slots=True)
class RecordFilter:
    """Narrowing inside a scope. The scope itself is not part of it: adapters add it, always."""

    kinds: tuple[Kind, ...] | None = None
    statuses: tuple[Status, ...] | None = (Status.ACTIVE,)
    category: str | None = None
    blind_token: str | None = None  # records whose blind index holds this token (exact identifier lookup)
    hidden_special: tuple[str, ...] = ()  # leave out records flagged with any of these special categories
    not_expired_at: datetime | None = None  # drop records whose expires_at is before this instant
    profile_only: bool = False  # only records flagged as profile records (``Memory.profile``)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A record found by one retriever, with that retriever's raw score."""

    memory: Memory
    score: float
    vector: Vector | None = None


@dataclass(frozen=True, slots=True)
class HybridHits:
    dense: list[Candidate] = field(default_factory=list)  # score = cosine similarity
    sparse: list[Candidate] = field(default_factory=list)  # score = BM25-style dot product


@dataclass(frozen=True, slots=True)
class AccessUpdate:
    memory_id: str
    count_delta: int
    at: datetime


class VectorIndex(Protocol):
    """Records and their vectors. Every method takes a ``Scope``; there is no unscoped query."""

    def upsert(self, scope: Scope, items: Sequence[IndexedMemory]) -> None: ...

    def replace_payload(self, scope: Scope, memories: Sequence[Memory]) -> None:
        """Rewrite the stored record fields (status, counters…) keeping the vectors."""
        ...

    def hybrid_search(
        self,
        scope: Scope,
        *,
        dense: Vector,
        sparse: SparseVector | None,
        limit: int,
        where: RecordFilter,
        with_vectors: bool = False,
        skipped: Skipped | None = None,
    ) -> HybridHits:
        """Candidates for ranking. Their ``text`` and ``pseudo_text`` may still be sealed: ranking reads
        neither (case links use ``blind_index``). Call ``reveal`` on the records you keep."""
        ...

    def reveal(self, scope: Scope, memories: Sequence[Memory], *, pseudo_text: bool = False,
               skipped: Skipped | None = None) -> list[Memory]:
        """The same records with ``text`` readable, and ``pseudo_text`` too when asked (reconcile reads
        it; what is shown to callers never does), in the same order, less those that do not open.
        Identity for a store that seals nothing."""
        ...

    def get(self, scope: Scope, ids: Sequence[str], *, reveal: bool = True,
            skipped: Skipped | None = None) -> list[Memory]:
        """``reveal=False``: as stored (sealed), to check that records exist without decrypting them."""
        ...

    def scroll(
        self, scope: Scope, *, where: RecordFilter, limit: int, offset: str | None = None, reveal: bool = True,
        skipped: Skipped | None = None,
    ) -> tuple[list[Memory], str | None]:
        """``reveal=False``: texts come back as stored (sealed), for passes that read only metadata
        (maintenance): no data key is unwrapped and no text is opened.

        Every read (``hybrid_search``, ``reveal``, ``get``, ``scroll``) leaves out a record that cannot
        be decoded or opened (a damaged payload, ciphertext or data key) and notes it in ``skipped``
        (:mod:`carnet.domain.unreadable`): one damaged record never fails the others. The cursor
        still moves past it. An unavailable dependency (KMS down) is raised, never skipped."""
        ...

    def count(self, scope: Scope, *, where: RecordFilter) -> int: ...

    def delete(self, scope: Scope, ids: Sequence[str]) -> None: ...

    def record_access(self, scope: Scope, updates: Sequence[AccessUpdate]) -> None: ...

    def rescope(self, old: Scope, new: Scope, items: Sequence[tuple[Memory, SparseVector]]) -> None:
        """Move records of ``old`` to ``new`` (the subject was re-hashed): each keeps its dense vector
        and takes the given record fields (scope ``new``) and sparse vector, one point at a time
        atomically. Ids must be ``old``'s; a record no longer there is skipped."""
        ...

    def check(self) -> None:
        """Raise ``DependencyUnavailable`` when the store cannot answer."""
        ...

    def compact(self) -> bool:
        """Reclaim the space of deleted points (their sealed payloads leave the segment files);
        ``True`` if anything was rewritten. A no-op for stores that vacuum on their own."""
        ...

    def close(self) -> None: ...


class Embedder(Protocol):
    """Dense text embeddings, L2-normalised, so a dot product is a cosine."""

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed_passages(self, texts: Sequence[str]) -> Vector:
        """Shape (len(texts), dim). Called in batches on writes."""
        ...

    def embed_query(self, text: str) -> Vector:
        """Shape (dim,)."""
        ...


class SparseEncoder(Protocol):
    """Keyword vectors whose indices are keyed token hashes (no word is stored in clear)."""

    def encode_document(self, scope: Scope, text: str) -> SparseVector: ...

    def encode_query(self, scope: Scope, text: str) -> SparseVector: ...


class SubjectHasher(Protocol):
    """Turns a caller's subject id (personal data) into the keyed hash stored everywhere."""

    def subject_hash(self, tenant: str, subject_id: str) -> str: ...

    def hash_key(self, tenant: str) -> str:
        """Name of the key the tenant's hashes are made with now (recorded with each subject)."""
        ...

    def token_key(self, tenant: str) -> bytes:
        """Per-tenant key for hashing sparse tokens."""
        ...

    def blind_tokens(self, tenant: str, identifiers: Iterable[str]) -> tuple[str, ...]:
        """Blind-index tokens of ``identifiers`` (keyed, normalised, truncated), sorted, no repeats."""
        ...

    def request_token(self, tenant: str, value: str) -> str:
        """Keyed hash of a request's identity or body (idempotency keys, record ids, fingerprints)."""
        ...


@dataclass(frozen=True, slots=True)
class ApiKeyRecord:
    key_id: str
    tenant: str
    roles: tuple[str, ...]
    created_at: datetime
    revoked: bool = False
    rate_limit: str | None = None  # e.g. "50/second"; None: the deployment's default
    name: str | None = None  # a label for operators ("ivr-bot"), never personal data


@dataclass(frozen=True, slots=True)
class RegisteredSubject:
    """A subject as the registry keeps it: never its id in clear."""

    scope: Scope
    hash_key: str  # the key-store entry of the hash key that made ``scope.subject``
    sealed_id: bytes  # the subject id, sealed under the subject's data key


class Catalog(Protocol):
    """The control plane: API keys and record history (SQLite embedded, PostgreSQL later)."""

    def add_api_key(self, *, key_id: str, key_hash: str, tenant: str, roles: Sequence[str],
                    rate_limit: str | None = None, name: str | None = None) -> ApiKeyRecord: ...

    def find_api_key(self, key_hash: str) -> ApiKeyRecord | None: ...

    def api_keys(self, tenant: str | None = None) -> list[ApiKeyRecord]:
        """Every key (of ``tenant`` when given), revoked ones included, oldest first."""
        ...

    def revoke_api_key(self, key_id: str, *, tenant: str | None = None) -> bool:
        """Revoke a key (only if it belongs to ``tenant`` when given); False if no such key."""
        ...

    def append_history(self, scope: Scope, entries: Sequence[HistoryEntry]) -> None: ...

    def history(self, scope: Scope, memory_id: str) -> list[HistoryEntry]: ...

    def add_aliases(self, scope: Scope, aliases: dict[str, str]) -> None:
        """Remember that write id ``alias`` was merged into record ``target`` (so a replay is a no-op)."""
        ...

    def resolve_aliases(self, scope: Scope, ids: Sequence[str]) -> dict[str, str]:
        """``{alias: target}`` for those of ``ids`` that were merged into another record."""
        ...

    def erase_subject(self, scope: Scope) -> int:
        """Delete the subject's history, aliases and registry row, at once; returns how many rows went."""
        ...

    def register_subject(self, scope: Scope, *, hash_key: str, sealed_id: bytes) -> bool:
        """Record the subject (its hash, the hash key's entry name, its id sealed); ``False`` if known."""
        ...

    def is_registered(self, scope: Scope) -> bool: ...

    def registered_subjects(self, tenant: str) -> list[RegisteredSubject]: ...

    def registered_tenants(self) -> list[str]:
        """Every tenant with at least one registered subject (maintenance walks them all)."""
        ...

    def subject_retention(self, scope: Scope) -> SubjectRetention:
        """The subject's legal hold and relationship end (defaults when nothing was recorded)."""
        ...

    def set_legal_hold(self, scope: Scope, *, held: bool, at: datetime, reference: str | None = None) -> None: ...

    def set_relationship_end(self, scope: Scope, ended_at: datetime | None) -> None:
        """``None`` reopens the relationship."""
        ...

    def move_subject(self, old: Scope, new: Scope, *, hash_key: str, sealed_id: bytes,
                     sealed_map: bytes | None = None) -> None:
        """A re-hashed subject: history, aliases, pseudonym map (resealed for ``new`` when given) and
        registry row move to ``new`` in one transaction."""
        ...

    def hash_key_entry(self, tenant: str) -> str | None:
        """The key-store entry of the tenant's current hash key (``None``: the first one)."""
        ...

    def tenants(self) -> list[str]:
        """Every tenant with a registered subject or a hash-key row (what a backup names), sorted."""
        ...

    def set_hash_key_entry(self, tenant: str, entry: str) -> None: ...

    def pseudonym_map(self, scope: Scope) -> tuple[bytes, int] | None:
        """The subject's sealed pseudonym map and its version, if it has one."""
        ...

    def put_pseudonym_map(self, scope: Scope, sealed: bytes, *, version: int) -> bool:
        """Store the map as ``version`` + 1 if the stored version is still ``version`` (0: none yet)."""
        ...

    def check(self) -> None: ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class WrappedKey:
    """A data key as the KMS wrapped it: safe to store (in the key store, never in data backups)."""

    tenant: str
    ciphertext: str  # the KMS's own format, e.g. Transit's "vault:v3:…"
    kek_version: int


class Kms(Protocol):
    """Key-encryption keys per tenant, which never leave the KMS (Vault/OpenBao Transit, a PKCS#11
    HSM, or the dev key file). Data keys are generated under them and stored wrapped."""

    def ensure_tenant_key(self, tenant: str) -> None: ...

    def generate_data_key(self, tenant: str) -> tuple[bytes, WrappedKey]:
        """A fresh 256-bit data key: its plaintext (kept in memory only) and its wrapped form."""
        ...

    def unwrap(self, wrapped: WrappedKey) -> bytes: ...

    def rotate(self, tenant: str) -> int:
        """A new version of the tenant's key; returns it. Existing wrapped keys still unwrap."""
        ...

    def rewrap(self, wrapped: Sequence[WrappedKey]) -> list[WrappedKey]:
        """The same data keys wrapped under the newest version, in the same order, same tenant."""
        ...

    def latest_version(self, tenant: str) -> int: ...

    def set_min_decryption_version(self, tenant: str, version: int) -> None:
        """Retire older versions: keys still wrapped under them stop unwrapping."""
        ...

    def destroy_tenant_key(self, tenant: str) -> bool:
        """Panic purge: destroy every version of the tenant's key; False when there was none."""
        ...

    def check(self) -> None: ...


class SubjectKeys(Protocol):
    """The subject's data key, as erasure sees it: destroying it makes every copy of the subject's
    sealed records (snapshots, backups) unreadable."""

    def shred(self, tenant: str, subject: str) -> bool:
        """Destroy the stored wrapped key and evict it from memory; False when there was none."""
        ...

    def exists(self, tenant: str, subject: str) -> bool: ...


class PiiDetector(Protocol):
    """Finds personal data in texts (spans with a type and a score)."""

    def detect(self, text: str) -> list[Span]: ...

    def detect_batch(self, texts: Sequence[str]) -> list[list[Span]]: ...


class PseudonymMaps(Protocol):
    """Each subject's pseudonym map, stored sealed under the subject's data key."""

    def load(self, scope: Scope) -> PseudonymMap: ...

    def save(self, scope: Scope, pmap: PseudonymMap) -> None:
        """Raise ``Conflict`` if another writer saved the subject's map since it was loaded."""
        ...

    def forget(self, scope: Scope) -> None:
        """Drop any cached copy (erasure)."""
        ...

    def forget_tenant(self, tenant: str) -> None:
        """Drop the tenant's cached copies (a tenant shred elsewhere)."""
        ...

    def clear(self) -> None:
        """Drop every cached copy."""
        ...


class SubjectIdSealer(Protocol):
    """Keeps subject ids (personal data) sealed, so hashes can be recomputed when the hash key rotates."""

    def seal_id(self, scope: Scope, subject_id: str) -> bytes: ...

    def open_id(self, scope: Scope, sealed: bytes) -> str: ...

    def seal_value(self, scope: Scope, name: str, value: str) -> bytes:
        """Another of the subject's values (a legal-hold reference), sealed and bound to ``name``."""
        ...

    def open_value(self, scope: Scope, name: str, sealed: bytes) -> str: ...


class Clock(Protocol):
    def now(self) -> datetime: ...


class SubjectLock(Protocol):
    """Serialises everything that writes one subject (remember, intake application, rectify, forget,
    retention, erasure) across every thread and process that shares the subject's stores: the
    in-process table of locks on the embedded store (``carnet.services.locks``), PostgreSQL advisory
    locks when the control plane is PostgreSQL (``carnet.adapters.postgres.locks``).

    Re-entrant within a thread: an intake worker holds its subject's lock around ``remember``, which
    takes it again. An adapter that can wait on another process raises ``SubjectBusy`` (503, retried)
    rather than waiting for ever."""

    def for_scope(self, scope: Scope) -> AbstractContextManager[object]: ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class StoredKey:
    """A subject's data key as stored: its id (written in every blob header) and its wrapped form."""

    subject: str
    key_id: str
    wrapped: WrappedKey

    @property
    def tenant(self) -> str:
        return self.wrapped.tenant


class KeyStore(Protocol):
    """Where wrapped data keys live: one entry per (tenant, subject), never inside a data backup.

    Deleting an entry is the crypto-shred: once the wrapped key is gone, every copy of the subject's
    ciphertext (snapshots, backups of the data dir) is unreadable even with the live KMS. Hence two
    rules instead of a blind ``put``:

    - ``put_if_absent``: two writers creating the first key of a subject at once must agree on one
      key, or records sealed under the loser's key would be lost;
    - ``replace`` is a compare-and-swap: a rewrap that read an entry before an erasure must not write
      it back afterwards (that would resurrect a shredded key).
    """

    def get(self, tenant: str, subject: str) -> StoredKey | None: ...

    def put_if_absent(self, key: StoredKey) -> StoredKey:
        """Store ``key`` unless the subject already has one; return the entry that is stored."""
        ...

    def replace(self, old: StoredKey, new: StoredKey) -> bool:
        """Swap ``old`` for ``new`` (same subject and key id) only if ``old`` is still stored."""
        ...

    def delete(self, tenant: str, subject: str) -> bool:
        """Destroy the subject's entry; ``True`` if there was one."""
        ...

    def scan(self, tenant: str) -> Iterator[StoredKey]:
        """Every entry of the tenant (for rewrap), read lazily."""
        ...


class AuditLog(Protocol):
    """Append-only, hash-chained per tenant (``carnet.domain.audit``)."""

    def append(self, events: Sequence[AuditEvent]) -> list[AuditEntry]:
        """Link and store in order, all or nothing. Raises ``AuditUnavailable``."""
        ...

    def head(self, tenant: str) -> tuple[int, str] | None: ...

    def entries(self, tenant: str, *, after_seq: int = 0, page: int = 1000) -> Iterator[AuditEntry]: ...

    def tenants(self) -> list[str]: ...

    def check(self) -> None: ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class ErasureEntry:
    """One erasure, as the ledger keeps it: keyed hashes only, never a subject id.

    ``subject`` is ``None`` for a whole tenant (a panic purge). ``hash_key`` names the hash-key
    generation that made ``subject`` (``~tenant-hash-key``, ``~tenant-hash-key.2``…): a hash only
    matches data written under the same generation."""

    tenant: str
    subject: str | None
    hash_key: str | None
    at: datetime


class ErasureLedger(Protocol):
    """Every erasure ever made, kept outside the data and its backups, so a restore can apply again
    the erasures made after its backup was taken."""

    def append(self, entry: ErasureEntry) -> None:
        """Durably record ``entry`` before anything is deleted; raises ``DependencyUnavailable``."""
        ...

    def entries(self) -> list[ErasureEntry]:
        """Every entry, oldest first; raises ``LedgerCorrupt`` rather than skip an unreadable line."""
        ...

    def close(self) -> None: ...


class CacheEvictions(Protocol):
    """What a process drops when told that keys were destroyed elsewhere (``KeyInvalidations``)."""

    def evict(self, tenant: str, subject: str | None) -> None:
        """The subject's cached copies (data key, pseudonym map…), or every one of the tenant when
        ``subject`` is ``None`` (a tenant shred). ``subject`` is the keyed subject hash."""
        ...

    def evict_all(self) -> None:
        """Every cached key and map: what was missed while not listening is unknown."""
        ...


class KeyInvalidations(Protocol):
    """Tells every other process that a subject's (or a tenant's) keys were destroyed, so they drop
    their cached copies within seconds instead of at the keyring's TTL. The message names the keyed
    subject hash (never a subject id); one process hears what every other publishes."""

    errors: int  # listener sessions lost since the process started (each one flushed the caches)

    def publish(self, tenant: str, subject: str | None) -> None:
        """After the key is destroyed. Best effort, never raises: a message that could not be sent is
        logged and counted, and the other processes then drop the key at their TTL."""
        ...

    def subscribe(self, evictions: CacheEvictions) -> None:
        """Start hearing the others (a background listener), calling ``evictions``."""
        ...

    def close(self) -> None: ...


class Extractor(Protocol):
    """Turns pseudonymised messages into facts worth remembering (rules, or an LLM)."""

    @property
    def name(self) -> str: ...

    @property
    def judges_contradictions(self) -> bool:
        """Whether ``obsolete`` can say more than reconcile's rules (an LLM can; rules cannot)."""
        ...

    def extract(self, messages: Sequence[Message], *, session_id: str | None, locale: str) -> Extraction:
        """Facts worth keeping (small talk filtered out) and, for a session, an episode summary.
        Raises ``ExtractionFailed`` (retryable) when the backend fails or answers out of schema."""
        ...

    def obsolete(self, new_fact: str, existing: Sequence[tuple[str, str]], *, locale: str) -> list[str]:
        """The ids among ``existing`` (id, text) that ``new_fact`` makes obsolete (contradiction
        judgment). Rule-based extractors return [] and leave it to reconcile's rules."""
        ...


class ContradictionJudge(Protocol):
    """What the LLM's contradiction judgment needs of an extractor (``Extractor.obsolete``): explicit
    writes get it too when an LLM is configured (:mod:`carnet.services.judge`)."""

    def obsolete(self, new_fact: str, existing: Sequence[tuple[str, str]], *, locale: str) -> list[str]: ...


class IntakeStore(Protocol):
    """Durable queue of intakes (SQLite embedded, PostgreSQL for several workers)."""

    def add(self, intake: Intake) -> Intake:
        """Store a new pending intake; with an idempotency key already used by the same tenant and
        subject, return the stored one instead (nothing added)."""
        ...

    def get(self, tenant: str, intake_id: str) -> Intake | None:
        """The tenant's intake (another tenant's is None, as an unknown one)."""
        ...

    def lease(self, *, owner: str, now: datetime, seconds: float, limit: int = 1) -> list[Intake]:
        """Take up to ``limit`` due intakes, at most one per subject and only each subject's oldest
        unfinished one (in order, one at a time), skipping subjects whose intake another live lease
        holds; an expired lease is taken over."""
        ...

    def renew(self, intake_id: str, *, owner: str, until: datetime) -> bool: ...

    def stage(self, intake_id: str, *, owner: str, sealed: bytes) -> bool:
        """Replace the sealed payload (the messages, then the messages with their extraction), if
        ``owner`` holds the lease: a retry after a crash applies the staged extraction again instead
        of asking the extractor anew, so the same intake never yields two different sets of memories."""
        ...

    def complete(self, intake_id: str, *, owner: str, memory_ids: Sequence[str], now: datetime) -> bool:
        """Done, if ``owner`` still holds the lease (False: it was lost, nothing changed)."""
        ...

    def fail(self, intake_id: str, *, owner: str, reason: str, now: datetime, retry_at: datetime | None) -> bool:
        """Back to pending at ``retry_at``, or dead when None; False if the lease was lost."""
        ...

    def retry_dead(self, *, tenant: str | None = None, intake_id: str | None = None, now: datetime) -> int:
        """Dead intakes back to pending with a fresh attempt count; how many."""
        ...

    def stats(self, tenant: str | None = None) -> QueueStats:
        """Unfinished and dead intakes, of every tenant or of ``tenant`` only."""
        ...

    def dead(self, tenant: str, *, limit: int = 100) -> list[Intake]:
        """The tenant's dead intakes, most recently failed first (their payloads left out: ``sealed`` empty)."""
        ...

    def forget_subject(self, tenant: str, subject: str) -> int:
        """Erasure: every intake of the subject, whatever its state."""
        ...

    def close(self) -> None: ...


class TeamProcedures(Protocol):
    """The tenants' team procedures (control plane: SQLite embedded, PostgreSQL ``carnet.team_procedures``).
    Every method is confined to one tenant: another tenant's procedure is None, as an unknown one."""

    def add(self, procedure: TeamProcedure) -> TeamProcedure:
        """Store a new one; a procedure of the same tenant with the same folded text (``key``) still
        proposed or approved is returned instead (nothing added): a proposal is made once."""
        ...

    def get(self, tenant: str, procedure_id: str) -> TeamProcedure | None: ...

    def list(self, tenant: str, *, status: ProcedureStatus | None = None, limit: int = 200) -> list[TeamProcedure]:
        """The tenant's procedures (of one status), oldest first."""
        ...

    def decide(self, tenant: str, procedure_id: str, *, expected: ProcedureStatus, status: ProcedureStatus,
               decided_by: str, at: datetime) -> TeamProcedure | None:
        """Move it from ``expected`` to ``status`` in one statement; None when it is not (or no longer)
        in ``expected`` (two supervisors deciding at once: one wins, the other is told)."""
        ...

    def close(self) -> None: ...
