"""The settings of /assemble and of recall: ``CE_ASSEMBLE__<NAME>`` and ``CE_RECALL__<NAME>``."""

from __future__ import annotations

from pydantic import BaseModel, Field


class AssembleSettings(BaseModel):
    auto_recall: bool = Field(True, description="Inject recalled context on tool_loop assembles.")
    recall_timeout_ms: int = Field(
        5000, ge=1, description="Time budget of recall inside /assemble."
    )
    history_cache_mb: float = Field(
        32,
        ge=0,
        description=(
            "Stored history of recently assembled sessions kept decoded between pre-prompt "
            "assembles, in MB of stored message text (0: none)."
        ),
    )
    fill_share: float = Field(
        0.9,
        gt=0,
        le=1,
        description=(
            "Share of the token budget, less its reserve, that the assembled context fills: what "
            "the history leaves of it goes to recall (per request: options.fillShare)."
        ),
    )


class RecallSettings(BaseModel):
    limit: int = Field(
        6, ge=1, le=50, description="Long-term memories injected at most (recallLimit)."
    )
    score_threshold: float = Field(
        0.15, ge=0, le=1, description="Lowest score of an injected memory."
    )
    max_injected_chars: int = Field(
        4000, ge=100, le=50000, description="Character budget of the long-term section."
    )
    experience_enabled: bool = Field(
        False, description="Recall agent experiences behind the task gate."
    )
    experience_recall_limit: int = Field(
        3, ge=1, le=10, description="Experiences injected at most."
    )
    experience_score_threshold: float = Field(
        0.35, ge=0, le=1, description="Lowest score of an injected experience."
    )
    experience_max_injected_chars: int = Field(
        6000, ge=500, le=50000, description="Character budget of the experience section."
    )
    experience_min_query_chars: int = Field(
        12, ge=1, le=500, description="Shorter queries never recall experiences."
    )
    decay_half_life_days: float = Field(
        30.0,
        ge=0,
        le=36500,
        description="Half-life of the score of events and cases in memory search (0: no decay).",
    )
    archive_enabled: bool = Field(
        True,
        description="Recall the session's own archived turns into the prompt "
        "(per request: options.archiveRecall.enabled).",
    )
    archive_limit: int = Field(
        60, ge=1, le=200, description="Archived turns recalled into one prompt at most."
    )
    archive_score_threshold: float = Field(
        0.12,
        ge=0,
        le=1,
        description="Lowest calibrated relevance of a recalled archived turn (0..1).",
    )
    archive_max_injected_chars: int = Field(
        16000, ge=100, le=200000, description="Character budget of the archive section."
    )
    archive_timeout_ms: int = Field(
        1000,
        ge=1,
        description="Time budget of archive recall; past it the prompt goes without it.",
    )
    cache_ttl_s: float = Field(
        120.0,
        ge=0,
        le=86400,
        description="Seconds an answer of recall is served again for the same query while the "
        "owners' memories are unchanged (the host asks before every model call of a turn); 0: off.",
    )
