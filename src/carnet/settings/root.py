"""One settings object, read from ``CARNET_*`` environment variables, a ``.env`` file or a secrets dir.

Nested groups use ``__`` in environment names, e.g. ``CARNET_SCORING__W_RELEVANCE=0.6``.
"""

from __future__ import annotations

import ipaddress
import os
from enum import StrEnum
from pathlib import Path
from typing import Literal, Self

from pydantic import BaseModel, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from carnet.settings.api import ApiSettings
from carnet.settings.console import ConsoleSettings
from carnet.settings.embed_server import EmbedServerSettings, PrefixMode
from carnet.settings.keys import (
    KeyStoreBackend,
    KeyStoreVaultSettings,
    KmsBackend,
    Pkcs11Settings,
    VaultAuth,
    VaultSettings,
)
from carnet.settings.models import EmbedderKind, ExtractorKind, LlmSettings
from carnet.settings.pii import PiiEngine, PiiSettings, SpecialCategoryPolicy
from carnet.settings.qdrant import QdrantServerSettings, QdrantSharding
from carnet.settings.recall import AssembleSettings, ScoringSettings
from carnet.settings.retention import (
    DecaySettings,
    RetentionAfter,
    RetentionClassName,
    RetentionClassSettings,
    TenantKey,
)
from carnet.settings.stores import CatalogBackend, PostgresSettings, PostgresSslMode, VectorBackend
from carnet.settings.tls import TlsSettings, TlsVersion
from carnet.settings.workers import MaintenanceSettings, WorkerSettings

__all__ = [
    "CLIENT_VARIABLES",
    "ApiSettings",
    "AssembleSettings",
    "CatalogBackend",
    "DecaySettings",
    "EmbedServerSettings",
    "EmbedderKind",
    "Environment",
    "ExtractorKind",
    "KeyStoreBackend",
    "KeyStoreVaultSettings",
    "KmsBackend",
    "LlmSettings",
    "MaintenanceSettings",
    "PiiEngine",
    "PiiSettings",
    "Pkcs11Settings",
    "PostgresSettings",
    "PostgresSslMode",
    "PrefixMode",
    "QdrantServerSettings",
    "QdrantSharding",
    "RetentionAfter",
    "RetentionClassName",
    "RetentionClassSettings",
    "ScoringSettings",
    "Settings",
    "SpecialCategoryPolicy",
    "TenantKey",
    "TlsSettings",
    "TlsVersion",
    "VaultAuth",
    "VaultSettings",
    "VectorBackend",
    "WorkerSettings",
]


# Read by clients (`carnet mcp` over stdio takes its API key from there, `carnet backup create` the address
# of the server that holds the store), never by the server's settings.
CLIENT_VARIABLES = frozenset({"CARNET_API_KEY", "CARNET_URL"})
# The API-key pepper is an HMAC key: production wants as many bytes as the hash gives (SHA-256).
MIN_PEPPER_BYTES = 32


class Environment(StrEnum):
    DEVELOPMENT = "development"
    PRODUCTION = "production"


def _loopback(host: str) -> bool:
    """``localhost`` or a loopback address: nothing off this machine can reach it."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to any interface


def _known(name: str) -> bool:
    """``CARNET_PORT`` or ``CARNET_SCORING__W_RECENCY``: a field, or a field of a nested group."""
    if name in CLIENT_VARIABLES:
        return True
    top, _, rest = name.removeprefix("CARNET_").lower().partition("__")
    field = Settings.model_fields.get(top)
    if field is None:
        return False
    if not rest:
        return True
    group = field.annotation
    return isinstance(group, type) and issubclass(group, BaseModel) and rest in group.model_fields


def _sibling(data_dir: Path, suffix: str) -> Path:
    """``<data dir><suffix>`` beside the data dir, however the data dir is spelled (``.``, ``./``, ``x/..``):
    keys and backups are never inside it."""
    base = data_dir if data_dir.name not in ("", ".", "..") else data_dir.absolute().resolve()
    return base.with_name(base.name + suffix)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="CARNET_",
        env_nested_delimiter="__",
        env_file=".env",
        extra="forbid",
        secrets_dir=None,
        hide_input_in_errors=True,  # a refused setting may be a secret: never echo it
    )

    environment: Environment = Environment.DEVELOPMENT
    data_dir: Path = Path("./carnet-data")
    # Keys (hash key, dev KMS) live outside the data dir so a data backup never carries them.
    key_dir: Path | None = None
    # Every erasure, by keyed hash, kept outside the data and its backups so a restore can apply again
    # the ones made after its backup (default: <key dir>/erasure-ledger.jsonl; refused inside the data dir).
    erasure_ledger: Path | None = None
    # Where `carnet backup create` and the scheduler write archives (default: <data dir>-backups).
    backup_dir: Path | None = None
    host: str = "127.0.0.1"
    port: int = Field(8080, ge=1, le=65535)
    tls: TlsSettings = TlsSettings()
    vector_backend: VectorBackend = VectorBackend.EDGE
    # The control plane (API keys, registry, history, intake queue, audit trail): SQLite or PostgreSQL.
    catalog: CatalogBackend = CatalogBackend.SQLITE
    postgres: PostgresSettings = PostgresSettings()
    qdrant: QdrantServerSettings = QdrantServerSettings()
    kms_backend: KmsBackend = KmsBackend.DEV
    vault: VaultSettings = VaultSettings()
    # Wrapped data keys: a directory beside the data dir (default) or Vault KV v2 (production).
    key_store: KeyStoreBackend = KeyStoreBackend.FILE
    key_store_vault: KeyStoreVaultSettings = KeyStoreVaultSettings()
    pkcs11: Pkcs11Settings = Pkcs11Settings()
    embedder: EmbedderKind = EmbedderKind.E5_FAST
    embedder_path: Path | None = None
    embedder_query_prefix: str = ""
    embedder_passage_prefix: str = ""
    embed_server: EmbedServerSettings = EmbedServerSettings()  # CARNET_EMBEDDER=remote
    embed_threads: int | None = Field(None, ge=1)
    # The model in a child process of its own (its own interpreter and GIL); see docs/configuration.md.
    # Unset: a child for `carnet serve` (``serving_defaults``), in process for every other command.
    embed_process: bool | None = None
    # Questions through ONNX Runtime (one call per forward, the interpreter lock released throughout)
    # or PyTorch (one call per operator); same weights. Passages always go through PyTorch.
    embed_query_engine: Literal["onnx", "torch"] = "onnx"
    # Queries that arrive while the model is busy are embedded together, up to this many (1: one by one).
    embed_query_batch: int = Field(16, ge=1, le=256)
    query_cache_size: int = Field(4096, ge=0)
    # Records of the embedded shard kept decoded (still sealed) in memory, ~1.5 KB each, so that a
    # query reads ids from the engine instead of every candidate's payload (~150 MB at the default);
    # 0: none. Not used with the Qdrant server, which other processes write to.
    record_cache_size: int = Field(100_000, ge=0)
    # Access statistics are written behind, in one batch per interval: each write to the shard
    # competes with searches, so fewer, larger batches keep assemble's tail latency down. A crash
    # loses at most one interval of counts (they only nudge ranking).
    access_flush_seconds: float = Field(30.0, gt=0, le=3600)
    calibration_dir: Path | None = None
    # The supersession judge's weights (``carnet judge train --out``); unset: the one that ships
    # (carnet/calibration/supersession-judge.json). docs/configuration.md.
    judge_path: Path | None = None
    # The rule extractor's turn filter (``carnet extract train --out``); unset: the one that ships
    # (carnet/calibration/turn-filter.json).
    turn_filter_path: Path | None = None
    api_key_pepper: SecretStr | None = None
    pii: PiiSettings = PiiSettings()
    # Who turns conversations into facts: rules (no LLM) or Mistral on vLLM (CARNET_LLM__*).
    extractor: ExtractorKind = ExtractorKind.RULES
    llm: LlmSettings = LlmSettings()
    # Per tenant ("*": every tenant without its own entry).
    special_categories: dict[str, SpecialCategoryPolicy] = Field(
        default_factory=lambda: {"*": SpecialCategoryPolicy()})
    # Keep a person's restore of a superseded record as a labelled pair (sealed under the member's key,
    # erased with the member) for `carnet judge train --corrections`: {tenant or "*": true}. Default: none.
    keep_corrections: dict[TenantKey, bool] = Field(default_factory=dict)
    scoring: ScoringSettings = ScoringSettings()
    assemble: AssembleSettings = AssembleSettings()
    api: ApiSettings = ApiSettings()
    console: ConsoleSettings = ConsoleSettings()
    # The hash-chained audit trail; its own file, never inside a backup (a restore must not rewind it).
    audit_path: Path | None = None
    audit_flush_seconds: float = Field(0.5, gt=0, le=60)
    default_retention_days: int | None = Field(None, ge=1)
    # Retention classes per tenant, e.g. {"acme": {"call_note": {"days": 183}, "aml": {"days": 1826,
    # "after": "relationship_end"}}, "*": {...}}; every tenant also has "default" (above) unless it
    # defines its own.
    retention: dict[TenantKey, dict[RetentionClassName, RetentionClassSettings]] = Field(default_factory=dict)
    decay: DecaySettings = DecaySettings()
    maintenance: MaintenanceSettings = MaintenanceSettings()
    workers: WorkerSettings = WorkerSettings()
    # Language of the prompt block and of the dates embedded with each record.
    locale: str = Field("fr", pattern="^(fr|en)$")
    embed_dates: bool = True
    log_level: str = "INFO"

    @property
    def resolved_audit_path(self) -> Path:
        return self.audit_path or self.data_dir / "audit.sqlite3"

    @property
    def resolved_key_dir(self) -> Path:
        return self.key_dir or _sibling(self.data_dir, "-keys")

    @property
    def resolved_erasure_ledger(self) -> Path:
        return self.erasure_ledger or self.resolved_key_dir / "erasure-ledger.jsonl"

    @property
    def resolved_backup_dir(self) -> Path:
        return self.backup_dir or _sibling(self.data_dir, "-backups")

    def serving_defaults(self) -> Self:
        """These settings as ``carnet serve`` runs them: what is left unset for a server is decided here.
        The model goes to a child process unless ``CARNET_EMBED_PROCESS`` says otherwise: in a server,
        the request threads' Python and the model then stop competing for one interpreter and one
        scheduling priority (docs/benchmarks.md, "The model in a child process by default")."""
        if self.embed_process is not None:
            return self
        return self.model_copy(update={"embed_process": True})

    @model_validator(mode="after")
    def _refuse_unknown_variables(self) -> Self:
        """A mistyped ``CARNET_*`` variable would otherwise be ignored and its default used silently."""
        unknown = sorted(k for k in os.environ if k.upper().startswith("CARNET_") and not _known(k.upper()))
        if unknown:
            raise ValueError(f"unknown setting(s): {', '.join(unknown)} (see docs/configuration.md)")
        return self

    @model_validator(mode="after")
    def _refuse_dev_only_in_production(self) -> Self:
        if self.environment is not Environment.PRODUCTION:
            return self
        problems = []
        if self.api_key_pepper is None:
            problems.append("CARNET_API_KEY_PEPPER must be set (the dev pepper file is refused)")
        elif len(self.api_key_pepper.get_secret_value().encode()) < MIN_PEPPER_BYTES:
            problems.append(f"CARNET_API_KEY_PEPPER must be at least {MIN_PEPPER_BYTES} bytes "
                            "(32 random bytes, base64: `openssl rand -base64 32`)")
        if not self.pii.enabled:
            problems.append("CARNET_PII__ENABLED=false is refused: personal data would be embedded and indexed "
                            "unmasked (it exists for benchmark comparisons only)")
        if self.kms_backend is KmsBackend.DEV:
            problems.append("CARNET_KMS_BACKEND=dev (a local key file) is refused: use vault")
        vault_used = self.kms_backend is KmsBackend.VAULT or self.key_store is KeyStoreBackend.VAULT
        if vault_used and not self.vault.url.startswith("https://"):
            problems.append("CARNET_VAULT__URL must use https in production (data keys and tokens cross it)")
        if self.vector_backend is VectorBackend.SERVER and not self.qdrant.url.startswith("https://"):
            problems.append("CARNET_QDRANT__URL must use https in production")
        if self.catalog is CatalogBackend.POSTGRES and self.postgres.sslmode is not PostgresSslMode.VERIFY_FULL:
            problems.append("CARNET_POSTGRES__SSLMODE must be verify-full in production")
        if self.extractor is ExtractorKind.MISTRAL and not self.llm.base_url.startswith("https://"):
            problems.append("CARNET_LLM__BASE_URL must use https in production (conversations go to it)")
        if self.embedder is EmbedderKind.REMOTE and not self.embed_server.base_url.startswith("https://"):
            problems.append("CARNET_EMBED_SERVER__BASE_URL must use https in production (texts to embed cross it)")
        if not self.tls.enabled and not self.tls.terminated_upstream and not _loopback(self.host):
            problems.append(f"listening in clear on {self.host}: set CARNET_TLS__CERT_FILE and CARNET_TLS__KEY_FILE, "
                            "or CARNET_TLS__TERMINATED_UPSTREAM=true when a proxy or ingress terminates TLS")
        if problems:
            raise ValueError("production settings refused: " + "; ".join(problems))
        return self
