"""Service settings: environment variables with the ``CE_`` prefix, groups nested with ``__``
(the groups are in ``app.settings.groups``).

Every field has a description and a default; the README lists each one (a test checks it).
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from typing import Annotated, Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from app.settings.groups import (
    ArchiveSettings,
    CaptureSettings,
    CommitSettings,
    ConsoleSettings,
    DatabaseSettings,
    EmbeddingSettings,
    HttpSettings,
    LlmSettings,
    McpSettings,
    MemorySettings,
    RateLimitSettings,
    RedactionSettings,
    WorkerSettings,
    WorkingMemorySettings,
)
from app.settings.recall import AssembleSettings, RecallSettings

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


class Settings(BaseSettings):
    """All settings of the service."""

    # Errors never echo a value: CE_API_KEYS holds keys.
    model_config = SettingsConfigDict(
        env_prefix="CE_",
        env_nested_delimiter="__",
        extra="ignore",
        env_file=None,
        hide_input_in_errors=True,
    )

    host: str = Field(
        "127.0.0.1", description="Address to listen on (non-loopback requires API keys)."
    )
    port: int = Field(8080, ge=1, le=65535, description="Port to listen on.")
    database_url: str = Field(
        "sqlite:///./data/context-engine.db", description="SQLAlchemy URL of the database."
    )
    max_body_bytes: int = Field(
        32 * 1024 * 1024, ge=1024, description="Largest accepted request body."
    )
    log_format: Literal["json", "console"] = Field("console", description="Log output format.")
    log_level: str = Field("INFO", description="Log level.")
    auto_migrate: bool = Field(
        True, description="Apply database migrations when the service starts."
    )
    api_keys: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Comma-separated `key:tenant[:scope+scope]` entries; when set, every request needs a Bearer key.",
    )
    hook_silent_after_s: float = Field(
        86400.0,
        ge=0,
        description="A session whose host sent no hook for this long is flagged `host_silent` in "
        "GET /sessions/{id} and the console (0: never).",
    )
    llm: LlmSettings = Field(default_factory=LlmSettings)
    wm: WorkingMemorySettings = Field(default_factory=WorkingMemorySettings)
    commit: CommitSettings = Field(default_factory=CommitSettings)
    capture: CaptureSettings = Field(default_factory=CaptureSettings)
    console: ConsoleSettings = Field(default_factory=ConsoleSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)
    assemble: AssembleSettings = Field(default_factory=AssembleSettings)
    archives: ArchiveSettings = Field(default_factory=ArchiveSettings)
    recall: RecallSettings = Field(default_factory=RecallSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    worker: WorkerSettings = Field(default_factory=WorkerSettings)
    db: DatabaseSettings = Field(default_factory=DatabaseSettings)
    redaction: RedactionSettings = Field(default_factory=RedactionSettings)
    http: HttpSettings = Field(default_factory=HttpSettings)
    rate_limit: RateLimitSettings = Field(default_factory=RateLimitSettings)

    @field_validator("api_keys", mode="before")
    @classmethod
    def _split_keys(cls, value: object) -> object:
        if isinstance(value, str):
            return [p.strip() for p in value.split(",") if p.strip()]
        return value

    @field_validator("api_keys")
    @classmethod
    def _keys_are_usable(cls, entries: list[str]) -> list[str]:
        """An empty key would let ``Authorization: Bearer `` in; one key cannot name two tenants."""
        tenants: dict[str, str] = {}
        for entry in entries:
            key, _, rest = entry.partition(":")
            if not key.strip():
                raise ValueError(
                    "CE_API_KEYS holds an entry with an empty key; every entry is key:tenant[:scopes]"
                )
            tenant = rest.partition(":")[0] or "default"
            if tenants.setdefault(key, tenant) != tenant:
                raise ValueError("CE_API_KEYS gives one key to two tenants")
        return entries

    @property
    def api_key_tenants(self) -> dict[str, str]:
        """Map of API key → tenant id (entries are ``key:tenant[:scope+scope]``)."""
        pairs = (entry.split(":", 2) for entry in self.api_keys)
        return {
            parts[0]: (parts[1] if len(parts) > 1 and parts[1] else "default") for parts in pairs
        }

    @property
    def api_key_scopes(self) -> dict[str, frozenset[str]]:
        """Map of API key → its scopes (``memories:read-sensitive``)."""
        out: dict[str, frozenset[str]] = {}
        for entry in self.api_keys:
            parts = entry.split(":", 2)
            out[parts[0]] = frozenset(
                s for s in (parts[2].split("+") if len(parts) > 2 else []) if s
            )
        return out

    @property
    def is_loopback(self) -> bool:
        if self.host in LOOPBACK_NAMES:
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    @property
    def uses_llm(self) -> bool:
        """Whether Phase 2 builds the Working Memory with the LLM."""
        return self.wm.mode != "extractive" and self.llm.configured

    def check_safe_to_serve(self) -> None:
        """Refuse to listen on a non-loopback address without API keys (docs/quality.md, Security)."""
        if not self.is_loopback and not self.api_keys:
            raise ValueError(
                f"refusing to listen on {self.host} without API keys: set CE_API_KEYS or bind to 127.0.0.1"
            )


@lru_cache
def get_settings() -> Settings:
    """Settings read from the environment once (for the CLI)."""
    return Settings()
