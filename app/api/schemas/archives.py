"""Shapes of /archives (docs/api.md, Archives)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AwareDatetime, Field

from app.api.schemas.base import ApiModel, Integer, RequestModel
from app.archives.read import results as found
from app.archives.read import views
from app.core.clock import isoformat

# archive_001 … archive_999999999: a well-formed id that names no archive is a 404, any other shape
# (a 20-digit number once reached the database as an integer overflow) a 400.
ARCHIVE_ID_PATTERN = r"^archive_[0-9]{1,9}$"


class ArchiveMessage(ApiModel):
    seq: int
    message: dict[str, Any]


class ArchiveView(ApiModel):
    archive_id: str
    session_id: str
    status: str
    abstract: str
    overview: str
    message_count: int
    first_seq: int
    last_seq: int
    started_at: str | None
    ended_at: str | None
    created_at: str | None
    completed_at: str | None
    messages: list[ArchiveMessage]
    error: str | None
    error_stage: str | None = None
    working_memory_path: str | None = Field(
        None,
        description="How the Working Memory was built: create, update, salvaged, fallback_create or extractive.",
    )
    usage: dict[str, int] = Field(
        default_factory=dict, description="LLM token usage of this archive."
    )

    @classmethod
    def from_result(cls, view: views.ArchiveView) -> ArchiveView:
        return cls(
            archive_id=view.archive_id,
            session_id=view.session_id,
            status=view.status,
            abstract=view.abstract,
            overview=view.overview,
            message_count=view.message_count,
            first_seq=view.first_seq,
            last_seq=view.last_seq,
            started_at=isoformat(view.started_at),
            ended_at=isoformat(view.ended_at),
            created_at=isoformat(view.created_at),
            completed_at=isoformat(view.completed_at),
            messages=[ArchiveMessage(seq=m.seq, message=m.message) for m in view.messages],
            error=view.error,
            error_stage=view.error_stage,
            working_memory_path=view.working_memory_path,
            usage=view.usage,
        )


class ArchiveSearchRequest(RequestModel):
    session_id: str = Field(min_length=1, max_length=512)
    # Blank queries are refused (a NUL is dropped before keyword and ranked search).
    query: str = Field(min_length=1, max_length=2000, pattern=r"[^\s\x00]")
    archive_id: str | None = Field(None, pattern=ARCHIVE_ID_PATTERN)
    mode: Literal["keyword", "regex", "ranked"] = "keyword"
    case_sensitive: bool = False
    limit: Integer = Field(20, ge=1, le=200)
    format: Literal["json", "text"] = "json"
    since: AwareDatetime | None = Field(
        None, strict=False, description="Only messages the host timestamped at or after this time."
    )
    until: AwareDatetime | None = Field(
        None, strict=False, description="Only messages the host timestamped at or before this time."
    )
    context: Integer = Field(
        0, ge=0, le=10, description="Archived turns returned before and after each message hit."
    )
    fusion: Literal["calibrated", "rrf"] = Field(
        "calibrated", description="Ranked mode: how the lexical and vector rankings are combined."
    )


class ArchiveSearchNeighbour(ApiModel):
    seq: int
    role: str
    text: str
    timestamp: str | None

    @classmethod
    def from_result(cls, neighbour: found.Neighbour) -> ArchiveSearchNeighbour:
        return cls(
            seq=neighbour.seq,
            role=neighbour.role,
            text=neighbour.text,
            timestamp=isoformat(neighbour.timestamp),
        )


class ArchiveSearchHit(ApiModel):
    archive_id: str
    seq: int | None
    role: str | None
    kind: Literal["message", "overview"]
    snippet: str
    score: float | None
    timestamp: str | None = Field(
        description="When the message was said (the host's timestamp; storage time when the host sent none); "
        "for an overview, when it was written."
    )
    match: Literal["all", "partial"] | None = Field(
        None, description="Keyword mode: whether the message holds every query term or only some."
    )
    context: list[ArchiveSearchNeighbour] | None = Field(
        None, description="Neighbouring turns, when `context` > 0."
    )

    @classmethod
    def from_result(cls, hit: found.SearchHit) -> ArchiveSearchHit:
        context = hit.context
        return cls.model_validate(
            {
                "archive_id": hit.archive_id,
                "seq": hit.seq,
                "role": hit.role,
                "kind": hit.kind,
                "snippet": hit.snippet,
                "score": hit.score,
                "timestamp": isoformat(hit.timestamp),
                "match": hit.match,
                "context": None
                if context is None
                else [ArchiveSearchNeighbour.from_result(n) for n in context],
            }
        )


class ArchiveSearchResponse(ApiModel):
    query: str
    mode: str
    count: int
    truncated: bool
    results: list[ArchiveSearchHit] = Field(
        description="Message hits only; overviews never take their place."
    )
    overviews: list[ArchiveSearchHit] = Field(
        default_factory=list, description="Matching archive overviews."
    )
    retrieval: Literal["hybrid", "lexical"] | None = Field(
        None,
        description="Ranked mode: hybrid when the query vector was available, else lexical only.",
    )

    @classmethod
    def from_result(cls, result: found.SearchResult) -> ArchiveSearchResponse:
        return cls.model_validate(
            {
                "query": result.query,
                "mode": result.mode,
                "count": len(result.results),
                "truncated": result.truncated,
                "results": [ArchiveSearchHit.from_result(h) for h in result.results],
                "overviews": [ArchiveSearchHit.from_result(h) for h in result.overviews],
                "retrieval": result.retrieval,
            }
        )
