"""The one place that builds the object graph from settings (``build``), from the parts chosen in
``stores``, ``keys`` and ``models``. Nothing is built at import time."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import structlog

from carnet.bootstrap.container import Container, SystemClock
from carnet.bootstrap.keys import build_key_invalidations, build_sealed_index
from carnet.bootstrap.models import build_embedder, build_extractor, build_judge, build_pii
from carnet.bootstrap.stores import (
    build_audit_log,
    build_control_plane,
    build_erasure_ledger,
    build_index,
    build_intake_store,
    build_retention,
    build_subject_locks,
    build_team_procedures,
)
from carnet.crypto.correction_sealer import CorrectionSealer
from carnet.crypto.intake_sealer import IntakeSealer
from carnet.crypto.keyring import Keyring
from carnet.crypto.subject_ids import KeyringSubjectIdSealer
from carnet.crypto.tenant_hasher import KmsSubjectHasher, is_hash_key_entry
from carnet.domain.budget import TierBudget
from carnet.domain.reconcile.decide import PairJudge
from carnet.domain.records import Scope
from carnet.domain.retention import DecayRule
from carnet.domain.scoring import CosineScale, Weights
from carnet.metrics import metrics_for
from carnet.ports import (
    Clock,
    Embedder,
    Extractor,
    Kms,
    SubjectLock,
)
from carnet.private_fs import restrict_umask
from carnet.services.audit import AuditTrail
from carnet.services.backup.snapshots import BackupReport
from carnet.services.deps import AssembleDefaults, Deps, Limits
from carnet.services.facade import Facade
from carnet.services.intake.queue import IntakeQueue
from carnet.services.intake.worker import WorkerPool
from carnet.services.lifecycle.evictions import CachedCopies
from carnet.services.memories.access import AccessRecorder
from carnet.services.memories.corrections import CorrectionKeeper
from carnet.services.memories.query_cache import CachedEmbedder
from carnet.services.memories.special import CategoryPolicy, SpecialPolicy
from carnet.services.ratelimit import RateLimiter
from carnet.services.refusals import RefusalTally
from carnet.services.subjects import SubjectRegistry
from carnet.settings.root import (
    CatalogBackend,
    Settings,
    VectorBackend,
)

log = structlog.get_logger(__name__)

CALIBRATION_DIR = Path(__file__).resolve().parent.parent / "calibration"  # carnet/calibration, in the wheel


def attach_judge(c: Container, judge: Extractor) -> None:
    """Explicit writes judged by ``judge`` (an LLM's contradiction judgment, its band's pairs asked as with
    ``CARNET_EXTRACTOR=mistral``): for a benchmark that hands the service a stand-in."""
    c.facade.judge = judge


def build(settings: Settings, *, embedder: Embedder | None = None, kms: Kms | None = None,
          supersession: PairJudge | None = None) -> Container:
    """The whole object graph. ``embedder``, ``kms`` and the ``supersession`` judge may be given ready (tests,
    benchmarks: ``carnet judge train`` must run when the shipped judge reads other features than this code's).
    Tightens the process umask (``private_fs``): what the stores create is private to this user."""
    from carnet.adapters.embedders.batching import QueryBatcher
    from carnet.adapters.embedders.remote import RemoteEmbedder
    from carnet.adapters.embedders.sparse_hash import HashedSparseEncoder
    from carnet.adapters.local.calibration_file import load_calibration
    from carnet.adapters.local.judge_file import JUDGE_FILE, load_judge

    restrict_umask()
    plane = build_control_plane(settings)
    emb = embedder or build_embedder(settings)
    own_close = getattr(emb, "close", None) if embedder is None else None  # a child process (embed_process)
    remote = emb if isinstance(emb, RemoteEmbedder) else None
    if settings.embed_query_batch > 1 and not isinstance(emb, QueryBatcher):  # concurrent queries, one model call
        emb = QueryBatcher(emb, max_batch=settings.embed_query_batch)
    calibration = load_calibration(emb.model_id, settings.calibration_dir or CALIBRATION_DIR,
                                    dated=settings.embed_dates)
    if not calibration.calibrated:
        log.warning("reconcile_uncalibrated", model=emb.model_id, note="using DESIGN.md default thresholds")
    invalidations = build_key_invalidations(settings)
    try:  # a store built by another model refuses the start: the embedder's client or child closes first
        index, keyring, kms = build_sealed_index(settings, build_index(settings, emb.dim, model_id=emb.model_id),
                                                 kms, invalidations=invalidations)
    except BaseException:
        if callable(own_close):
            own_close()
        raise
    hasher = KmsSubjectHasher(keyring, kms, plane.catalog.hash_key_entry)
    locks = build_subject_locks(settings, on_acquire=lambda scope: _forget_cached(keyring, deps, scope))
    keyring.before_create = _held_by_the_writer(locks)
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
        supersession=supersession or load_judge(settings.judge_path or CALIBRATION_DIR / JUDGE_FILE,
                                                embedding_model=emb.model_id),
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
    store_backup = None
    if settings.vector_backend is VectorBackend.EDGE and settings.catalog is CatalogBackend.SQLITE:
        from carnet.bootstrap.ops import backup_now  # POST /admin/backup: the scheduler's job, on demand

        def store_backup() -> BackupReport:
            return backup_now(container)  # the container below, built by then

    facade = Facade(deps, audit, queue, pepper=plane.pepper, procedures=build_team_procedures(settings),
                    observe=metrics.retrieval, judge=judge[0] if judge else None, store_backup=store_backup,
                    corrections=CorrectionKeeper(deps.catalog, CorrectionSealer(keyring), settings.keep_corrections))
    facade.wait_max_seconds = settings.workers.wait_max_seconds
    container = Container(settings, deps, plane.pepper, metrics, kms, keyring, audit, facade,
                          RateLimiter(settings.api.rate_limit or None), queue,
                          RefusalTally(audit, deps.clock, pepper=plane.pepper), invalidations)
    if remote is not None:  # /readyz's embedder check, and its counters and circuit on /metrics
        container.probes["embedder"] = remote.check
        metrics.watch_embed_server(remote.stats.snapshot, lambda: remote.state.value)
    if judge is not None:
        container.closing.append(judge[1])
    if callable(own_close):
        container.closing.append(own_close)
    return container


def build_audit(settings: Settings, clock: Clock | None = None) -> AuditTrail:
    """The audit trail, its batch writer started (reads are appended every ``audit_flush_seconds``)."""
    audit = AuditTrail(build_audit_log(settings), clock or SystemClock(), interval=settings.audit_flush_seconds)
    audit.start()
    return audit


def _held_by_the_writer(locks: SubjectLock) -> Callable[[str, str], None]:
    """The key ring's check before it creates a subject's data key: the writer holds the subject's
    lock, and still holds it (``SubjectLock.check_held``). The tenant's hash keys (``~tenant-hash-key``…)
    belong to no subject."""

    def check(tenant: str, subject: str) -> None:
        if not is_hash_key_entry(subject):
            locks.check_held(Scope(tenant, subject))

    return check


def _forget_cached(keyring: Keyring, deps: Deps, scope: Scope) -> None:
    """What this process cached about a subject, which an erasure in another process would make
    wrong: the data key (a write would seal under a destroyed key), the registration (the subject
    would never be registered again), the pseudonym map."""
    keyring.forget(scope.tenant, scope.subject)
    deps.subjects.forget(scope)
    deps.pii.maps.forget(scope)


def start_workers(c: Container, *, extractor: Extractor | None = None, prefix: str = "serve") -> WorkerPool:
    """Intake workers on this container's stores, as threads; stopped by ``Container.close``."""
    from carnet.domain.intake import RetryPolicy
    from carnet.services.intake.worker import Worker, owner_name

    w = c.settings.workers
    ext = extractor or build_extractor(c.settings)
    stats = getattr(ext, "stats", None)
    if stats is not None:  # the LLM extractor's calls, retries and failures
        c.metrics.watch_llm(ext.name, stats)
    policy = RetryPolicy(w.max_attempts, w.backoff_seconds, w.max_backoff_seconds, w.outage_retry_seconds,
                         w.outage_max_hours * 3600)
    pool = WorkerPool(lambda n: Worker(c.deps, c.queue, ext, c.audit, owner=owner_name(prefix, n), policy=policy,
                                       lease_seconds=w.lease_seconds, hooks=c.metrics.worker_hooks(ext.name),
                                       propose=c.facade.propose_extracted,
                                       context_minutes=w.session_context_minutes),
                      threads=w.threads, poll_seconds=w.poll_seconds)
    c.workers = pool
    c.queue.bell.listen(pool.wake)  # a new intake wakes them at once
    c.metrics.watch_background("worker", pool.errors)
    pool.start()
    return pool
