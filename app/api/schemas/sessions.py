"""Shapes of /sessions (docs/api.md, Sessions)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from app.api.schemas.base import ApiModel, Integer, RequestModel


class ArchiveSummary(ApiModel):
    archive_id: str
    status: str
    message_count: int
    created_at: str | None
    completed_at: str | None
    error: str | None


class LlmUsage(ApiModel):
    prompt_tokens: int
    completion_tokens: int


class SessionView(ApiModel):
    session_id: str
    session_key: str | None
    agent_id: str
    user_id: str
    message_count: int
    total_message_count: int
    pending_tokens: int
    keep_recent_count: int
    commit_count: int
    last_commit_at: str | None
    created_at: str | None
    updated_at: str | None
    llm_usage: LlmUsage
    archives: list[ArchiveSummary]


class CommitRequest(RequestModel):
    keep_recent_count: Integer = Field(0, ge=0, le=10000)
    wait: bool = False
    timeout_ms: Integer = Field(120000, ge=0, le=600000)
    custom_instructions: str | None = Field(None, max_length=20000)


class CommitResponse(ApiModel):
    session_id: str
    status: str
    archive_id: str | None
    reason: str | None = None
    archive: dict[str, Any] | None = None


class DeletedCounts(ApiModel):
    messages: int
    archives: int


class DeleteResponse(ApiModel):
    session_id: str
    deleted: DeletedCounts
