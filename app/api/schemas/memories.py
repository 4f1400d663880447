"""Shapes of /memories (api.md, Memories)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from app.api.schemas.base import ApiModel

Category = Literal["profile", "preferences", "entities", "events", "cases", "experiences", "skills", "tools"]
Sensitivity = Literal["allowed", "masked", "never-store"]


class MemoryObject(ApiModel):
    id: str
    uri: str
    category: str
    title: str
    abstract: str
    content: str
    confidence: float
    sensitivity: str
    priority: int
    expires_at: str | None
    version: int
    source: dict[str, Any]
    observed_at: str | None
    created_at: str | None
    updated_at: str | None
    superseded_by: str | None
    owner_kind: str
    owner_id: str
    embedding_model: str | None


class CommitMemoryRequest(ApiModel):
    content: str = Field(min_length=1, max_length=100_000)
    category: Category
    user_id: str | None = Field(None, max_length=256)
    agent_id: str | None = Field(None, max_length=256)
    title: str | None = Field(None, max_length=500)
    priority: int = Field(0, ge=-100, le=100)
    confidence: float = Field(1.0, ge=0, le=1)
    sensitivity: Sensitivity = "allowed"
    ttl_days: float | None = Field(None, gt=0, le=36500)
    source: dict[str, Any] | None = None


class CommitMemoryResponse(ApiModel):
    action: Literal["ADD", "UPDATE", "NONE"]
    reason: str | None = None
    memory: MemoryObject | None = None


class MemoryList(ApiModel):
    items: list[MemoryObject]
    next_cursor: str | None


class PatchMemoryRequest(ApiModel):
    version: int | None = Field(None, ge=1)
    title: str | None = Field(None, max_length=500)
    abstract: str | None = Field(None, max_length=2000)
    content: str | None = Field(None, min_length=1, max_length=100_000)
    category: Category | None = None
    confidence: float | None = Field(None, ge=0, le=1)
    sensitivity: Literal["allowed", "masked"] | None = None
    priority: int | None = Field(None, ge=-100, le=100)
    ttl_days: float | None = Field(None, ge=0, le=36500)


class DeleteMemoryResponse(ApiModel):
    id: str
    deleted: bool


class SearchMemoriesRequest(ApiModel):
    query: str = Field(min_length=1, max_length=4000)
    categories: list[Category] | None = None
    target_uri: str | None = Field(None, max_length=1024)
    user_id: str | None = Field(None, max_length=256)
    agent_id: str | None = Field(None, max_length=256)
    limit: int = Field(10, ge=1, le=100)
    score_threshold: float = Field(0.0, ge=0, le=1)
    mode: Literal["hybrid", "bm25", "vector"] = "hybrid"
    explain: bool = False


class SearchHit(ApiModel):
    id: str
    uri: str
    category: str
    title: str
    abstract: str
    content: str
    score: float
    level: int
    created_at: str | None
    updated_at: str | None
    explain: dict[str, Any] | None = None


class SearchMemoriesResponse(ApiModel):
    mode: str
    results: list[SearchHit]


class ForgetRequest(ApiModel):
    user_id: str | None = Field(None, max_length=256)
    agent_id: str | None = Field(None, max_length=256)
    days: float | None = Field(None, gt=0, le=36500)
    subject: str | None = Field(None, min_length=1, max_length=500)
    dry_run: bool = False


class ForgetResponse(ApiModel):
    deleted: int
    ids: list[str]
    dry_run: bool


class ImportResponse(ApiModel):
    imported: int
    ids: list[str]
