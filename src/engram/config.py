"""Settings, read from the environment (and an optional .env file) once, in entry points only."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import platformdirs
from pydantic import AliasChoices, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


def default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir("engram"))


class Settings(BaseSettings):
    """Every knob Engram has. Environment names are ENGRAM_<FIELD> unless noted."""

    model_config = SettingsConfigDict(env_prefix="ENGRAM_", env_file=".env", extra="ignore")

    database_url: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("DATABASE_URL", "ENGRAM_DATABASE_URL"),
        description="External PostgreSQL (>= 14 with pgvector >= 0.8 and pg_trgm). Unset: embedded PostgreSQL.",
    )
    owner_database_url: SecretStr | None = Field(
        default=None,
        description="The schema owner's PostgreSQL URL, for `engram migrate` and index upkeep (external databases; "
        "DATABASE_URL is then the service's own login, granted engram_app).",
    )
    data_dir: Path = Field(default_factory=default_data_dir, description="Embedded database directory.")
    embedded_shared_buffers: str = Field(
        default="auto",
        description="Shared buffers of the embedded PostgreSQL: auto (a quarter of memory, 128 MB-2 GB) or e.g. 512MB.",
    )
    host: str = "127.0.0.1"
    port: int = Field(default=8420, ge=1, le=65535)

    embedder: Literal["local", "openai", "hashing"] = "local"
    embedding_url: str | None = Field(default=None, description="OpenAI-compatible base URL, e.g. .../v1")
    embedding_model: str = "text-embedding-3-small"
    embedding_dimensions: int = Field(default=1536, ge=1, le=16000)
    embedding_api_key: SecretStr | None = None
    embedding_send_dimensions: bool = False
    embedding_timeout: float = Field(default=10.0, gt=0)
    embedding_batch_size: int = Field(default=64, ge=1, le=2048)
    embedding_runtime: Literal["onnx", "torch"] = "onnx"
    embedding_concurrency: int = Field(default=2, ge=1, le=64)

    extractor: Literal["rules", "llm"] = Field(
        default="rules", description="What turns text into candidate memories: rules (no model) or llm."
    )
    llm_url: str | None = Field(
        default=None, description="OpenAI-compatible base URL of the LLM (extractor, summariser)"
    )
    llm_model: str = "gpt-4o-mini"
    llm_api_key: SecretStr | None = None
    llm_timeout: float = Field(default=30.0, gt=0)

    recall_receipts: Literal["behind", "inline"] = Field(
        default="behind",
        description="behind: a recall's receipt is written just after it answers (this process reads it back at "
        "once); inline: written before the recall answers.",
    )
    pool_min_size: int = Field(default=1, ge=0)
    pool_max_size: int = Field(default=10, ge=1)
    tenant_pool_share: float = Field(
        default=0.5, gt=0, le=1, description="Share of the pool one tenant may hold at once; beyond it: HTTP 429."
    )
    statement_timeout: float = Field(
        default=5.0, gt=0, le=3600, description="Seconds a database statement may run before it is cancelled (503)."
    )
    max_body_bytes: int = Field(
        default=16 * 1024 * 1024,
        ge=1024,
        description="Largest request body the REST API reads (413 beyond it): a batch of 1,000 memories of "
        "12,000 characters.",
    )
    enrichment_interval: float = Field(default=1.0, gt=0, description="Seconds between enrichment polls.")
    decay_interval: float = Field(
        default=3600.0, ge=1, description="Seconds between a tenant's scheduled decay passes (SPEC 6.3)."
    )
    consolidation_interval: float = Field(
        default=21600.0, ge=1, description="Seconds between a tenant's scheduled consolidations (SPEC 6.4)."
    )
    receipt_retention_interval: float = Field(
        default=3600.0,
        ge=1,
        description="Seconds between a tenant's scheduled deletions of the recall receipts its lifecycle policy "
        "no longer keeps (receipt_days).",
    )
    redis_url: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("REDIS_URL", "ENGRAM_REDIS_URL"),
        description="Redis for the conversation buffer (redis://host:6379/0); unset: the buffer is in PostgreSQL.",
    )
    buffer_turns: int = Field(
        default=10, ge=1, le=1000, description="Turns a session's buffer holds before they are condensed into memories."
    )
    buffer_raw: Literal["archive", "drop"] = Field(
        default="archive",
        description="What becomes of condensed turns: archive (kept as archived memories the summaries derive "
        "from) or drop.",
    )
    webhook_allowed_hosts: str | None = Field(
        default=None,
        description="Where outbox webhooks may go: comma-separated host names (*.example.com), addresses or CIDR "
        "ranges. Set: only there. Unset: any public address. Private, loopback and link-local addresses only when "
        "listed.",
    )
    summariser: Literal["extractive", "llm"] = Field(
        default="extractive",
        description="What condenses buffered turns: extractive (deterministic, no model) or llm (the chat endpoint of "
        "ENGRAM_LLM_URL; the extractive one stands in when it fails).",
    )
    log_level: str = "INFO"
    log_format: Literal["text", "json"] = Field(
        default="text", description="How `serve` and `worker` print their logs: text, or one JSON object per line."
    )
    access_log: bool = Field(default=True, description="One JSON line per HTTP request on stderr (engram.access).")
    metrics: bool = Field(default=True, description="Serve Prometheus metrics at GET /metrics (unauthenticated).")
    ui: bool = Field(default=True, description="Serve the review UI at /ui (reviewer and admin keys sign in).")
    mcp: bool = Field(default=True, description="Serve MCP (streamable HTTP) at /mcp, behind the API keys.")
    otel_endpoint: str | None = Field(
        default=None,
        description="OTLP/HTTP endpoint for OpenTelemetry traces (e.g. http://collector:4318); unset: "
        "OTEL_EXPORTER_OTLP_ENDPOINT, else no traces.",
    )
    otel_service_name: str = Field(default="engram", description="service.name of the traces")
    subject_keys_dir: Path | None = Field(
        default=None,
        description="Where users' vault data keys live, outside the database (default: <data_dir>/subject-keys); "
        "forgetting a user deletes theirs.",
    )
    vault_keys: SecretStr | None = Field(
        default=None,
        description="Keys of the PII vault: comma-separated id:base64 (32 random bytes each; `engram vault "
        "new-key` makes one), the current one first. Unset: a key generated once into <data dir>/vault-keys.",
    )

    @field_validator("embedded_shared_buffers")
    @classmethod
    def _shared_buffers(cls, value: str) -> str:
        from engram.sizing import shared_buffers_kb

        shared_buffers_kb(value)  # raises ValueError naming what is allowed
        return value

    @model_validator(mode="after")
    def _pool_sizes(self) -> Settings:
        if self.pool_min_size > self.pool_max_size:
            raise ValueError(
                f"pool_min_size ({self.pool_min_size}) must not exceed pool_max_size ({self.pool_max_size})"
            )
        if self.summariser == "llm" and not self.llm_url:
            raise ValueError("ENGRAM_LLM_URL must be set when ENGRAM_SUMMARISER=llm")
        return self
