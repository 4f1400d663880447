"""The groups of the service settings: ``CE_<GROUP>__<NAME>`` (``app.settings.Settings`` holds
one of each)."""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import BaseModel, Field, field_validator
from pydantic_settings import NoDecode


class LlmSettings(BaseModel):
    base_url: str | None = Field(None, description="OpenAI-compatible base URL (unset: no LLM).")
    api_key: str | None = Field(None, description="API key sent as a Bearer token to the LLM.")
    model: str | None = Field(None, description="Model name for Working Memory and extraction.")
    timeout_s: float = Field(120.0, gt=0, description="Timeout of one LLM call, in seconds.")
    max_attempts: int = Field(
        4, ge=1, le=10, description="Attempts of one LLM call on transient errors."
    )
    temperature: float = Field(0.0, ge=0, le=2, description="Sampling temperature of LLM calls.")
    max_output_tokens: int = Field(
        4096, ge=64, description="Largest answer requested from the LLM."
    )
    extra_headers: dict[str, str] = Field(
        default_factory=dict,
        description='Extra HTTP headers for the LLM, as JSON (e.g. {"X-Org": "a"}).',
    )

    @property
    def configured(self) -> bool:
        return bool(self.base_url and self.model)


class WorkingMemorySettings(BaseModel):
    mode: Literal["auto", "llm", "extractive"] = Field(
        "auto",
        description="auto: the LLM when one is configured, else extractive; llm: require an LLM.",
    )


class CommitSettings(BaseModel):
    token_threshold_ratio: float = Field(
        0.5,
        ge=0,
        le=1,
        description="Auto-commit when pending tokens reach this share of the budget (0 = every turn).",
    )
    keep_recent_count: int = Field(
        10,
        ge=0,
        le=10000,
        description="Messages kept live by an automatic commit (commitKeepRecentCount).",
    )
    force_compact_ratio: float = Field(
        0.7,
        ge=0,
        le=1,
        description="compactRecommended when active tokens exceed this share of the budget.",
    )
    default_token_budget: int = Field(
        128000, gt=0, description="Token budget used when a request gives none."
    )


class CaptureSettings(BaseModel):
    bypass_session_patterns: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Comma-separated globs over sessionKey (else sessionId); `*` = [^:]*, `**` = .*.",
    )
    image_tokens: int = Field(1000, ge=0, description="Token cost counted for each image block.")

    @field_validator("bypass_session_patterns", mode="before")
    @classmethod
    def _split_patterns(cls, value: object) -> object:
        if isinstance(value, str):
            return [p.strip() for p in value.replace("\n", ",").split(",") if p.strip()]
        return value


class EmbeddingSettings(BaseModel):
    provider: Literal["local", "openai", "none"] = Field(
        "local",
        description="local: the bundled multilingual model; openai: an /embeddings endpoint; none: keyword only.",
    )
    base_url: str | None = Field(
        None, description="OpenAI-compatible base URL for provider=openai."
    )
    api_key: str | None = Field(None, description="API key of the embedding endpoint.")
    model: str | None = Field(None, description="Embedding model name for provider=openai.")
    dimensions: int = Field(384, description="Vector size; the vector index holds 384 dimensions.")
    timeout_s: float = Field(30.0, gt=0, description="Timeout of one embedding call, in seconds.")
    max_chunks_per_memory: int = Field(
        4,
        ge=1,
        le=1000,
        description="Chunks of one memory that get vectors; every chunk is keyword-indexed.",
    )
    max_tokens_per_memory: int = Field(
        256,
        ge=16,
        le=1_000_000,
        description="Model input tokens of one memory that get embedded, over its first chunks "
        "(the last one cut): bounds the model time one memory or imported record can take.",
    )
    similarity_floor: float | None = Field(
        None,
        ge=0,
        lt=1,
        description="Cosine the model gives unrelated texts; memory scores count similarity above it. "
        "Default: 0.78 for the local model, 0 for an endpoint.",
    )


class MemorySettings(BaseModel):
    extraction: bool = Field(
        True, description="Extract memories and experiences in Phase 2 when an LLM is configured."
    )
    import_max_records: int = Field(
        1000,
        ge=1,
        le=1_000_000,
        description="Records one POST /memories/import may hold; more is a 413.",
    )


class RedactionSettings(BaseModel):
    stored_messages: bool = Field(
        False,
        description="Redact secrets in the stored message bodies too (archive expand then shows them redacted).",
    )


class HttpSettings(BaseModel):
    header_timeout_s: float = Field(
        10.0,
        gt=0,
        le=600,
        description="Time a client has to send a request's headers (served by `serve`).",
    )
    body_timeout_s: float = Field(
        60.0, gt=0, le=3600, description="Time a client has to send a whole request body."
    )


class RateLimitSettings(BaseModel):
    hooks_per_s: float = Field(
        1000.0, ge=0, description="Hook requests per second per tenant (0: unlimited)."
    )
    hooks_burst: int = Field(
        2000, ge=1, description="Hook requests a tenant may send at once above the rate."
    )
    search_per_s: float = Field(
        50.0, ge=0, description="Search requests per second per tenant (0: unlimited)."
    )
    search_burst: int = Field(
        100, ge=1, description="Search requests a tenant may send at once above the rate."
    )
    replicas: int = Field(
        1,
        ge=1,
        le=1024,
        description="Service processes sharing the load behind one gateway: each enforces 1/replicas of the rates and bursts.",
    )

    def configured(self, kind: str) -> tuple[float, int]:
        """The tenant's (rate, burst) for ``kind`` (hooks or search), all replicas together."""
        if kind == "hooks":
            return self.hooks_per_s, self.hooks_burst
        return self.search_per_s, self.search_burst

    def share(self, kind: str) -> tuple[float, int]:
        """(rate, burst) one process enforces for ``kind``: its share of the tenant's limit."""
        rate, burst = self.configured(kind)
        return rate / self.replicas, max(1, math.ceil(burst / self.replicas))

    def described(self, kind: str) -> dict[str, float | int]:
        rate, burst = self.configured(kind)
        return {"perSecond": rate, "burst": burst, "replicas": self.replicas}


class ArchiveSettings(BaseModel):
    regex_timeout_ms: int = Field(
        1000, ge=10, description="Hard time limit of one regex archive search."
    )


class WorkerSettings(BaseModel):
    enabled: bool = Field(True, description="Run the Phase 2 worker inside the API process.")
    lease_s: float = Field(
        60.0, gt=0, description="Lease of a claimed Phase 2 job, renewed while it runs."
    )
    poll_interval_ms: int = Field(
        200, ge=10, description="How often an idle worker looks for jobs."
    )
    concurrency: int = Field(2, ge=1, le=64, description="Phase 2 jobs one worker runs at once.")
    max_attempts: int = Field(
        4, ge=1, description="Attempts of a Phase 2 job before it is marked failed."
    )
    drain_s: float = Field(
        20.0,
        ge=0,
        description="On SIGTERM, how long running Phase 2 jobs may finish before they are handed back to the queue.",
    )
    fault_delay_ms: int = Field(
        0,
        ge=0,
        description="Fault injection for crash tests: hold each Phase 2 job this long while running.",
    )


class ConsoleSettings(BaseModel):
    enabled: bool = Field(
        True, description="Serve the operator console at /console (same API keys as the API)."
    )


class McpSettings(BaseModel):
    enabled: bool = Field(
        True,
        description="Serve MCP (streamable HTTP) at /mcp for other agents (same API keys as the API).",
    )


class DatabaseSettings(BaseModel):
    sqlite_synchronous: Literal["FULL", "NORMAL"] = Field(
        "FULL",
        description="SQLite synchronous mode (FULL: a 200 survives power loss; NORMAL: process crash only).",
    )
    busy_timeout_ms: int = Field(
        10000, ge=0, description="SQLite busy timeout for a locked database."
    )
    pool_size: int = Field(8, ge=1, description="Connections kept in the pool.")
    vector_cache_mb: int = Field(
        256,
        ge=0,
        description="Memory for the in-process vector matrices of the partitions searched lately (0: search the vector tables directly; a session's message passages then are rescored for its nearest messages only, as when they do not fit).",
    )
    storage_retry_after_s: int = Field(
        30,
        ge=1,
        le=3600,
        description="After a storage failure (disk full, read-only file): Retry-After of the 503s and how long /readyz fails.",
    )
