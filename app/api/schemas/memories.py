"""Shapes of /memories (docs/api.md, Memories)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, field_validator

from app.api.schemas.base import WHOLE_NUMBER, ApiModel, Integer, RequestModel

# An ISO 8601 time as /memories/export writes it (a time without offset is taken as UTC).
Timestamp = Annotated[str, Field(json_schema_extra={"format": "date-time"})]
Category = Literal[
    "profile", "preferences", "entities", "events", "cases", "experiences", "skills", "tools"
]
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


class CommitMemoryRequest(RequestModel):
    content: str = Field(min_length=1, max_length=100_000)
    category: Category
    user_id: str | None = Field(None, max_length=256)
    agent_id: str | None = Field(None, max_length=256)
    title: str | None = Field(None, max_length=500)
    priority: Integer = Field(0, ge=-100, le=100)
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


class PatchMemoryRequest(RequestModel):
    # Constraints before the validator, or they drop out of the nullable field's JSON schema.
    version: Annotated[int, Field(ge=1), WHOLE_NUMBER] | None = None
    title: str | None = Field(None, max_length=500)
    abstract: str | None = Field(None, max_length=2000)
    content: str | None = Field(None, min_length=1, max_length=100_000)
    category: Category | None = None
    confidence: float | None = Field(None, ge=0, le=1)
    sensitivity: Literal["allowed", "masked"] | None = None
    priority: Annotated[int, Field(ge=-100, le=100), WHOLE_NUMBER] | None = None
    ttl_days: float | None = Field(None, ge=0, le=36500)


class DeleteMemoryResponse(ApiModel):
    id: str
    deleted: bool


class SearchMemoriesRequest(RequestModel):
    query: str = Field(min_length=1, max_length=4000)
    categories: list[Category] | None = None
    target_uri: str | None = Field(None, max_length=1024)
    user_id: str | None = Field(None, max_length=256)
    agent_id: str | None = Field(None, max_length=256)
    limit: Integer = Field(10, ge=1, le=100)
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


class ImportRecord(RequestModel):
    """One line of POST /memories/import: a memory object as /memories/export writes it."""

    id: str = Field(min_length=1, max_length=36)
    uri: str = Field(min_length=1, max_length=1024)
    category: Category
    content: str
    owner_kind: Literal["user", "agent"]
    owner_id: str = Field(min_length=1, max_length=256)
    title: str | None = None
    abstract: str | None = None
    confidence: float = Field(1.0, ge=0, le=1)
    sensitivity: Sensitivity = "allowed"
    priority: Integer = Field(0, ge=-(2**63), lt=2**63)
    version: Integer = Field(1, ge=1, lt=2**63)
    source: dict[str, Any] | None = None
    superseded_by: str | None = Field(None, max_length=36)
    expires_at: Timestamp | None = None
    observed_at: Timestamp | None = None
    created_at: Timestamp | None = None
    updated_at: Timestamp | None = None

    @field_validator("expires_at", "observed_at", "created_at", "updated_at")
    @classmethod
    def _timestamp(cls, value: str | None) -> str | None:
        if value is not None:  # "" is not a time either
            datetime.fromisoformat(value.replace("Z", "+00:00"))  # a ValueError names the field
        return value


class ForgetRequest(RequestModel):
    # days, subject or both: the schema says what forget() checks.
    model_config = ConfigDict(
        json_schema_extra={
            "anyOf": [
                {"required": ["days"], "properties": {"days": {"type": "number"}}},
                {"required": ["subject"], "properties": {"subject": {"type": "string"}}},
            ]
        }
    )

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
